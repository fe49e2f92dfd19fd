package core

import (
	"bufio"
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

// A direct receive port (one-to-one, explicit receipt: only Receive reads its
// connection) notices a sender whose instance the registry reports dead: at once when
// the port is idle, when the live message is finished when it is busy, and only after
// the messages the sender finished before it died have been received.

// loopTransport is a plain TCP transport on 127.0.0.1 whose sockets can be cut at once,
// as a killed process's kernel would.
type loopTransport struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

type loopIn struct{ c net.Conn }

func (i loopIn) Close() error { return i.c.Close() }

// loopStream is a connection's buffered stream with the connection's read deadlines,
// so that loopTransport's one-to-one ports are read directly (ServeDirect).
type loopStream struct {
	*bufio.Reader
	c net.Conn
}

func (s loopStream) SetReadDeadline(t time.Time) error { return s.c.SetReadDeadline(t) }

func (t *loopTransport) track(c net.Conn) {
	t.mu.Lock()
	t.conns = append(t.conns, c)
	t.mu.Unlock()
}

func (t *loopTransport) Start(acc Acceptor) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	t.ln = ln
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.track(c)
			t.wg.Add(1)
			go func() {
				defer t.wg.Done()
				defer c.Close()
				if br, a := acceptConn(acc, c, loopIn{c}); a != nil {
					a.ServeDirect(loopStream{br, c})
				}
			}()
		}
	}()
	return ln.Addr().String(), nil
}

func (t *loopTransport) Dial(ctx context.Context, addr string, req *Request, lost func(error)) (OutConn, *Reply, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	t.track(c)
	return dialConn(c, req)
}

// cut closes every socket of the transport.
func (t *loopTransport) cut() {
	t.mu.Lock()
	for _, c := range t.conns {
		_ = c.Close()
	}
	t.mu.Unlock()
}

// Capabilities: the streams take read deadlines, so direct ports read them directly.
func (t *loopTransport) Capabilities() Capabilities {
	return Capabilities{TLS: true, DirectReads: true}
}

func (t *loopTransport) Close() error {
	_ = t.ln.Close()
	t.cut()
	t.wg.Wait()
	return nil
}

// diedPair is a sender instance and a receiver instance with a connected direct port
// pair; sent is the sender's transport, to cut.
type diedPair struct {
	snd, rcv *Instance
	sent     *loopTransport
	sp       ipl.SendPort
	rp       ipl.ReceivePort
}

func newDiedPair(ctx context.Context, t *testing.T) *diedPair {
	pt := ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationData, ipl.ReceiveExplicit,
		ipl.CommunicationReliable, ipl.CommunicationFIFO, ipl.ConnectionDowncalls)
	cfg := &ipl.Config{Pool: "died", PortTypes: []ipl.PortType{pt}, Logger: zap.NewNop(),
		ListenHost: "127.0.0.1", ConnectTimeout: 10 * time.Second, MaxMessageSize: 1 << 20}
	rcv, err := Open(ctx, cfg, "loop", &loopTransport{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rcv.Close() })
	cfg2 := *cfg
	cfg2.Registry = rcv.embedded.Addr()
	p := &diedPair{rcv: rcv, sent: &loopTransport{}}
	if p.snd, err = Open(ctx, &cfg2, "loop", p.sent); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.snd.Close() })
	if p.rp, err = rcv.CreateReceivePort(ctx, pt, "in"); err != nil {
		t.Fatal(err)
	}
	if p.sp, err = p.snd.CreateSendPort(pt, "out"); err != nil {
		t.Fatal(err)
	}
	if err := p.sp.Connect(ctx, rcv.Identifier(), "in"); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *diedPair) send(ctx context.Context, t *testing.T, v int64) {
	w, err := p.sp.NewMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = w.WriteInt64(v)
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
}

// die cuts the sender's sockets and tells the receiver what its registry would.
func (p *diedPair) die() {
	p.sent.cut()
	p.rcv.peerGone(p.snd.Identifier(), registry.Died)
}

func (p *diedPair) receive(ctx context.Context, t *testing.T, want int64) ipl.ReadMessage {
	m, err := p.rp.Receive(ctx)
	if err != nil {
		t.Fatalf("receive %d: %v", want, err)
	}
	if v, err := m.ReadInt64(); err != nil || v != want {
		t.Fatalf("read %d, %v; want %d", v, err, want)
	}
	return m
}

func (p *diedPair) wantGone(t *testing.T, when string) {
	t.Helper()
	if got := p.rp.ConnectedTo(); len(got) != 0 {
		t.Fatalf("%s, the port still lists the dead sender %v", when, got)
	}
	if lost, err := p.rp.LostConnections(); err != nil || len(lost) != 1 {
		t.Fatalf("%s: LostConnections = %v, %v; want the dead sender", when, lost, err)
	}
}

func TestDirectPortSeesDeadSender(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	t.Run("idle", func(t *testing.T) {
		p := newDiedPair(ctx, t)
		p.send(ctx, t, 1)
		_, _ = p.receive(ctx, t, 1).Finish()
		rp := p.rp.(*ReceivePort)
		src, ok := rp.src.(*directSource)
		if !ok || src.current() == nil {
			t.Fatal("a one-to-one explicit port served through ServeDirect does not read its connection directly")
		}
		p.die()
		p.wantGone(t, "once the death is reported")
	})
	t.Run("message live", func(t *testing.T) {
		p := newDiedPair(ctx, t)
		p.send(ctx, t, 1)
		m := p.receive(ctx, t, 1)
		p.die()
		if got := p.rp.ConnectedTo(); len(got) != 1 {
			t.Fatalf("the sender of a live message is gone already: %v", got)
		}
		if _, err := m.Finish(); err != nil {
			t.Fatal(err)
		}
		p.wantGone(t, "once the live message is finished")
	})
	t.Run("messages waiting", func(t *testing.T) {
		p := newDiedPair(ctx, t)
		p.send(ctx, t, 7)
		p.send(ctx, t, 8)
		p.die()
		// Nothing the sender finished is lost.
		for _, v := range []int64{7, 8} {
			if got := p.rp.ConnectedTo(); len(got) != 1 {
				t.Fatalf("the sender is gone before message %d was received: %v", v, got)
			}
			if _, err := p.receive(ctx, t, v).Finish(); err != nil {
				t.Fatal(err)
			}
		}
		p.wantGone(t, "once its messages are received")
	})
}
