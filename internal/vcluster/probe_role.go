package vcluster

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"time"
)

// The probe's modes, the first byte a probe sends on a connection to a sink.
const (
	modeEcho = 'e' // echo every byte back until EOF
	modeBulk = 'b' // an 8-byte length, that many bytes; the sink answers their SHA-256
	modeWho  = 'w' // the sink answers the address it sees the probe at, and a newline
)

// probeTimeout bounds every exchange of a probe; a test's own deadline is shorter.
const probeTimeout = 5 * time.Minute

// selfRole runs a measuring part of the cluster (see envSelf): "wansink" listens on the
// host and prints its port; "wanprobe MODE ADDR ..." measures against a sink and prints a
// JSON line. It returns the exit code.
func selfRole(role string, args []string) int {
	var err error
	switch role {
	case "wansink":
		err = sink()
	case "wanprobe":
		err = probe(args)
	default:
		err = fmt.Errorf("unknown role %q", role)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "vcluster %s: %v\n", role, err)
		return 1
	}
	return 0
}

// sink serves probes until its standard input closes.
func sink() error {
	ln, err := net.Listen("tcp4", ":0")
	if err != nil {
		return err
	}
	defer ln.Close()
	fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		_ = ln.Close()
	}()
	for {
		conn, err := ln.Accept()
		if err != nil {
			return nil // closed: standard input went
		}
		go serveProbe(conn)
	}
}

func serveProbe(conn net.Conn) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(probeTimeout))
	var mode [1]byte
	if _, err := io.ReadFull(conn, mode[:]); err != nil {
		return
	}
	switch mode[0] {
	case modeEcho:
		_, _ = io.Copy(conn, conn)
	case modeWho:
		host, _, _ := net.SplitHostPort(conn.RemoteAddr().String())
		_, _ = io.WriteString(conn, host+"\n")
	case modeBulk:
		var n [8]byte
		if _, err := io.ReadFull(conn, n[:]); err != nil {
			return
		}
		h := sha256.New()
		if _, err := io.CopyN(h, conn, int64(binary.BigEndian.Uint64(n[:]))); err != nil {
			return
		}
		_, _ = conn.Write(h.Sum(nil))
	}
}

// probeResult is what a probe prints.
type probeResult struct {
	Connect []time.Duration `json:"connect,omitempty"` // TCP connect times (one round trip each)
	Echo    []time.Duration `json:"echo,omitempty"`    // one-byte echo round trips
	Bytes   int64           `json:"bytes,omitempty"`
	Elapsed time.Duration   `json:"elapsed,omitempty"` // from the first byte sent to the sum received
	Intact  bool            `json:"intact,omitempty"`  // the sink's sum matched
	Seen    string          `json:"seen,omitempty"`    // the address the sink saw
	Error   string          `json:"error,omitempty"`   // dial: why it failed
}

// probe runs one measurement: "rtt ADDR N", "bulk ADDR BYTES", "who ADDR", "dial ADDR
// TIMEOUT" (a failure is a result, not an error) or "hold ADDR" (an echo, "ready", then
// after a line on standard input a second echo on the same connection).
func probe(args []string) error {
	if len(args) < 2 {
		return errors.New("want MODE ADDR [ARG]")
	}
	mode, addr := args[0], args[1]
	arg := ""
	if len(args) > 2 {
		arg = args[2]
	}
	var res probeResult
	var err error
	switch mode {
	case "rtt":
		res, err = probeRTT(addr, arg)
	case "bulk":
		res, err = probeBulk(addr, arg)
	case "who":
		res, err = probeWho(addr)
	case "dial":
		d, perr := time.ParseDuration(arg)
		if perr != nil {
			return perr
		}
		conn, derr := net.DialTimeout("tcp4", addr, d)
		if derr != nil {
			res.Error = derr.Error()
		} else {
			conn.Close()
		}
	case "hold":
		res, err = probeHold(addr)
	default:
		err = fmt.Errorf("unknown probe %q", mode)
	}
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

func dialMode(addr string, mode byte) (net.Conn, error) {
	conn, err := net.DialTimeout("tcp4", addr, probeTimeout)
	if err != nil {
		return nil, err
	}
	_ = conn.SetDeadline(time.Now().Add(probeTimeout))
	if _, err := conn.Write([]byte{mode}); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

func probeRTT(addr, count string) (probeResult, error) {
	var res probeResult
	n, err := strconv.Atoi(count)
	if err != nil || n < 1 {
		return res, fmt.Errorf("rtt: count %q", count)
	}
	for range n {
		t0 := time.Now()
		conn, err := net.DialTimeout("tcp4", addr, probeTimeout)
		if err != nil {
			return res, err
		}
		res.Connect = append(res.Connect, time.Since(t0))
		conn.Close()
	}
	conn, err := dialMode(addr, modeEcho)
	if err != nil {
		return res, err
	}
	defer conn.Close()
	b := []byte{0}
	for range n {
		t0 := time.Now()
		if _, err := conn.Write(b); err != nil {
			return res, err
		}
		if _, err := io.ReadFull(conn, b); err != nil {
			return res, err
		}
		res.Echo = append(res.Echo, time.Since(t0))
	}
	return res, nil
}

func probeBulk(addr, size string) (probeResult, error) {
	var res probeResult
	n, err := strconv.ParseInt(size, 10, 64)
	if err != nil || n < 1 {
		return res, fmt.Errorf("bulk: size %q", size)
	}
	conn, err := dialMode(addr, modeBulk)
	if err != nil {
		return res, err
	}
	defer conn.Close()
	var hdr [8]byte
	binary.BigEndian.PutUint64(hdr[:], uint64(n))
	t0 := time.Now()
	if _, err := conn.Write(hdr[:]); err != nil {
		return res, err
	}
	h := sha256.New()
	src := io.LimitReader(rand.NewChaCha8([32]byte{'i', 'b', 'i', 's'}), n)
	if _, err := io.Copy(io.MultiWriter(conn, h), src); err != nil {
		return res, err
	}
	var sum [sha256.Size]byte
	if _, err := io.ReadFull(conn, sum[:]); err != nil {
		return res, err
	}
	res.Elapsed, res.Bytes = time.Since(t0), n
	res.Intact = slices.Equal(sum[:], h.Sum(nil))
	return res, nil
}

func probeWho(addr string) (probeResult, error) {
	conn, err := dialMode(addr, modeWho)
	if err != nil {
		return probeResult{}, err
	}
	defer conn.Close()
	line, err := bufio.NewReader(conn).ReadString('\n')
	return probeResult{Seen: line[:max(len(line)-1, 0)]}, err
}

func probeHold(addr string) (probeResult, error) {
	var res probeResult
	conn, err := dialMode(addr, modeEcho)
	if err != nil {
		return res, err
	}
	defer conn.Close()
	b := []byte{1}
	echo := func() error {
		t0 := time.Now()
		if _, err := conn.Write(b); err != nil {
			return err
		}
		if _, err := io.ReadFull(conn, b); err != nil {
			return err
		}
		res.Echo = append(res.Echo, time.Since(t0))
		return nil
	}
	if err := echo(); err != nil {
		return res, err
	}
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return res, fmt.Errorf("hold: waiting for the go-ahead: %w", err)
	}
	return res, echo()
}
