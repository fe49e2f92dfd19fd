package tcp

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

// The ping-pong benchmarks run between this process and a peer process started from
// the same test binary: a raw net.TCPConn echo as the baseline, and an Ibis echo over
// impl/tcp, measured in the same run so their ratio means something on a noisy host.
//
//	go test -run '^$' -bench PingPong -benchtime 2000x ./impl/tcp

const envBenchPeer = "IBIS_TCP_BENCH_PEER"

var pingType = ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationData, ipl.ReceiveExplicit,
	ipl.CommunicationReliable, ipl.CommunicationFIFO)

// Message kinds of the echo protocol.
const (
	kindEmpty   = 0
	kindBytes   = 1
	kindFloat64 = 2
)

type benchPeers struct {
	raw    net.Conn
	rawCmd *selfexec.Child
	// raw2 is a second raw baseline with one connection per direction, the shape of
	// Ibis connections (a send port to a receive port is one-way).
	raw2out, raw2in net.Conn
	raw2Cmd         *selfexec.Child
	srv             *registry.Server
	ib              ipl.Ibis
	sp              ipl.SendPort
	rp              ipl.ReceivePort
	ibisCmd         *selfexec.Child
}

var (
	peersOnce sync.Once
	peers     *benchPeers
	peersErr  error
)

// startPeer starts a peer process (this test binary with env) and returns it with its
// standard output, where it says its address.
func startPeer(env ...string) (*selfexec.Child, io.Reader, error) {
	c, err := selfexec.Start(context.Background(), []string{selfexec.NoTests}, selfexec.WithEnv(env...),
		selfexec.WithStdoutPipe(), selfexec.WithStderr(os.Stderr))
	if err != nil {
		return nil, nil, err
	}
	return c, c.StdoutPipe(), nil
}

func getPeers(b *testing.B) *benchPeers {
	peersOnce.Do(func() { peers, peersErr = launchPeers() })
	if peersErr != nil {
		b.Fatal(peersErr)
	}
	return peers
}

func launchPeers() (*benchPeers, error) {
	p := &benchPeers{}
	// Raw echo peer: it prints its address.
	cmd, out, err := startPeer(envBenchPeer + "=raw")
	if err != nil {
		return nil, err
	}
	p.rawCmd = cmd
	var addr string
	if _, err := fmt.Fscanln(out, &addr); err != nil {
		return nil, fmt.Errorf("raw peer address: %w", err)
	}
	if p.raw, err = net.Dial("tcp", addr); err != nil {
		return nil, err
	}
	_ = p.raw.(*net.TCPConn).SetNoDelay(true)

	cmd, out, err = startPeer(envBenchPeer + "=raw2")
	if err != nil {
		return nil, err
	}
	p.raw2Cmd = cmd
	if _, err := fmt.Fscanln(out, &addr); err != nil {
		return nil, fmt.Errorf("raw2 peer address: %w", err)
	}
	if p.raw2out, err = net.Dial("tcp", addr); err != nil {
		return nil, err
	}
	if p.raw2in, err = net.Dial("tcp", addr); err != nil {
		return nil, err
	}
	_ = p.raw2out.(*net.TCPConn).SetNoDelay(true)
	_ = p.raw2in.(*net.TCPConn).SetNoDelay(true)

	// Ibis echo peer: a pool of two around an embedded registry.
	if p.srv, err = registry.StartEmbedded("127.0.0.1:0"); err != nil {
		return nil, err
	}
	pool := fmt.Sprintf("bench-%d", time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p.ibisCmd, _, err = startPeer(envBenchPeer+"=ibis", ipl.EnvRegistry+"="+p.srv.Addr(), ipl.EnvPool+"="+pool, ipl.EnvPoolSize+"=2")
	if err != nil {
		return nil, err
	}
	p.ib, err = ipl.New(ctx, ipl.WithImplementation(Name), ipl.WithPortTypes(pingType),
		ipl.WithRegistry(p.srv.Addr()), ipl.WithPool(pool), ipl.WithPoolSize(2), ipl.WithTag("bench"))
	if err != nil {
		return nil, err
	}
	if err := p.ib.Registry().WaitUntilPoolClosed(ctx); err != nil {
		return nil, err
	}
	var peer ipl.IbisIdentifier
	for _, m := range p.ib.Registry().Members() {
		if m.ID != p.ib.Identifier().ID {
			peer = m
		}
	}
	if p.rp, err = p.ib.CreateReceivePort(ctx, pingType, "pong"); err != nil {
		return nil, err
	}
	if p.sp, err = p.ib.CreateSendPort(pingType, "ping"); err != nil {
		return nil, err
	}
	if err := p.sp.Connect(ctx, peer, "ping"); err != nil {
		return nil, err
	}
	return p, nil
}

func stopBenchPeers() {
	if peers == nil {
		return
	}
	for _, c := range []net.Conn{peers.raw, peers.raw2in, peers.raw2out} {
		if c != nil {
			_ = c.Close()
		}
	}
	if peers.ib != nil {
		_ = peers.ib.Close()
	}
	for _, c := range []*selfexec.Child{peers.rawCmd, peers.raw2Cmd, peers.ibisCmd} {
		if c != nil {
			c.Close()
		}
	}
	if peers.srv != nil {
		_ = peers.srv.Close()
	}
}

// runBenchPeer is the peer process's main.
func runBenchPeer() int {
	var err error
	switch os.Getenv(envBenchPeer) {
	case "raw":
		err = rawEcho(false)
	case "raw2":
		err = rawEcho(true)
	case "ibis":
		err = ibisEcho()
	}
	if err != nil && !strings.Contains(err.Error(), "EOF") {
		fmt.Fprintln(os.Stderr, "bench peer:", err)
		return 1
	}
	return 0
}

// rawEcho answers each length-prefixed frame with the same frame, on the same
// connection, or with two set to true on a second connection the client opens.
func rawEcho(two bool) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr())
	in, err := ln.Accept()
	if err != nil {
		return err
	}
	out := in
	if two {
		if out, err = ln.Accept(); err != nil {
			return err
		}
		_ = out.(*net.TCPConn).SetNoDelay(true)
	}
	_ = in.(*net.TCPConn).SetNoDelay(true)
	buf := make([]byte, 8<<20)
	var hdr [8]byte
	for {
		if _, err := io.ReadFull(in, hdr[:]); err != nil {
			return err
		}
		n := binary.LittleEndian.Uint64(hdr[:])
		if _, err := io.ReadFull(in, buf[:n]); err != nil {
			return err
		}
		if _, err := (&net.Buffers{hdr[:], buf[:n]}).WriteTo(out); err != nil {
			return err
		}
	}
}

// ibisEcho answers each message on port "ping" with the same content on "pong".
func ibisEcho() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ib, err := ipl.New(ctx, ipl.WithImplementation(Name), ipl.WithPortTypes(pingType), ipl.WithTag("echo"))
	if err != nil {
		return err
	}
	defer ib.Close()
	rp, err := ib.CreateReceivePort(ctx, pingType, "ping")
	if err != nil {
		return err
	}
	if err := ib.Registry().WaitUntilPoolClosed(ctx); err != nil {
		return err
	}
	var peer ipl.IbisIdentifier
	for _, m := range ib.Registry().Members() {
		if m.ID != ib.Identifier().ID {
			peer = m
		}
	}
	sp, err := ib.CreateSendPort(pingType, "pong")
	if err != nil {
		return err
	}
	if err := sp.Connect(ctx, peer, "pong"); err != nil {
		return err
	}
	bytes := make([]byte, 8<<20)
	floats := make([]float64, 1<<20)
	for {
		m, err := rp.Receive(context.Background())
		if err != nil {
			return err
		}
		kind, _ := m.ReadByte()
		n, _ := m.ReadInt()
		switch kind {
		case kindBytes:
			err = m.ReadArray(bytes[:n])
		case kindFloat64:
			err = m.ReadArray(floats[:n])
		}
		if _, ferr := m.Finish(); err != nil || ferr != nil {
			return fmt.Errorf("echo read: %v %v", err, ferr)
		}
		w, err := sp.NewMessage(context.Background())
		if err != nil {
			return err
		}
		_ = w.WriteByte(kind)
		_ = w.WriteInt(n)
		switch kind {
		case kindBytes:
			err = w.WriteArray(bytes[:n])
		case kindFloat64:
			err = w.WriteArray(floats[:n])
		}
		if _, ferr := w.Finish(); err != nil || ferr != nil {
			return fmt.Errorf("echo write: %v %v", err, ferr)
		}
	}
}

func rawRoundTrip(b *testing.B, c, back net.Conn, payload, in []byte) {
	var hdr, rh [8]byte
	binary.LittleEndian.PutUint64(hdr[:], uint64(len(payload)))
	bufs := net.Buffers{hdr[:], payload}
	if _, err := bufs.WriteTo(c); err != nil {
		b.Fatal(err)
	}
	if _, err := io.ReadFull(back, rh[:]); err != nil {
		b.Fatal(err)
	}
	if _, err := io.ReadFull(back, in[:len(payload)]); err != nil {
		b.Fatal(err)
	}
}

func ibisRoundTrip(b *testing.B, p *benchPeers, kind byte, n int, out, in any) {
	ctx := context.Background()
	w, err := p.sp.NewMessage(ctx)
	if err != nil {
		b.Fatal(err)
	}
	_ = w.WriteByte(kind)
	_ = w.WriteInt(n)
	if kind != kindEmpty {
		if err := w.WriteArray(out); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := w.Finish(); err != nil {
		b.Fatal(err)
	}
	m, err := p.rp.Receive(ctx)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = m.ReadByte()
	_, _ = m.ReadInt()
	if kind != kindEmpty {
		if err := m.ReadArray(in); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := m.Finish(); err != nil {
		b.Fatal(err)
	}
}

func float64Bytes(f []float64) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), len(f)*8)
}

// BenchmarkPingPong reports round trips; for the 1 MiB cases SetBytes counts the bytes
// moved both ways so that MB/s is the round-trip throughput.
func BenchmarkPingPong(b *testing.B) {
	const mib = 1 << 20
	outB, inB := make([]byte, mib), make([]byte, mib)
	outF, inF := make([]float64, mib/8), make([]float64, mib/8)
	for i := range outF {
		outF[i] = float64(i)
	}
	b.Run("raw/0B", func(b *testing.B) {
		p := getPeers(b)
		for b.Loop() {
			rawRoundTrip(b, p.raw, p.raw, nil, inB)
		}
	})
	b.Run("raw2conn/0B", func(b *testing.B) {
		p := getPeers(b)
		for b.Loop() {
			rawRoundTrip(b, p.raw2out, p.raw2in, nil, inB)
		}
	})
	b.Run("ibis/0B", func(b *testing.B) {
		p := getPeers(b)
		for b.Loop() {
			ibisRoundTrip(b, p, kindEmpty, 0, nil, nil)
		}
	})
	b.Run("raw/1MiB", func(b *testing.B) {
		p := getPeers(b)
		b.SetBytes(2 * mib)
		for b.Loop() {
			rawRoundTrip(b, p.raw, p.raw, outB, inB)
		}
	})
	b.Run("ibis/1MiB-bytes", func(b *testing.B) {
		p := getPeers(b)
		b.SetBytes(2 * mib)
		for b.Loop() {
			ibisRoundTrip(b, p, kindBytes, mib, outB, inB)
		}
	})
	b.Run("raw/1MiB-float64", func(b *testing.B) {
		p := getPeers(b)
		b.SetBytes(2 * mib)
		ob, ib := float64Bytes(outF), float64Bytes(inF)
		for b.Loop() {
			rawRoundTrip(b, p.raw, p.raw, ob, ib)
		}
	})
	b.Run("ibis/1MiB-float64", func(b *testing.B) {
		p := getPeers(b)
		b.SetBytes(2 * mib)
		for b.Loop() {
			ibisRoundTrip(b, p, kindFloat64, mib/8, outF, inF)
		}
	})
}
