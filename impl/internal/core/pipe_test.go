package core

import (
	"bufio"
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/ibisgo/ibis/ipl"
)

// pipeTransport is an in-memory transport whose incoming connections cannot take read
// deadlines: ports that would read their connection directly must fall back to the
// reader goroutine. It shows that the core works with any transport, not only tcp.
type pipeTransport struct {
	mu   sync.Mutex
	acc  Acceptor
	wg   sync.WaitGroup
	open []net.Conn
}

// Capabilities: no direct reads (a pipe takes no read deadlines here).
func (t *pipeTransport) Capabilities() Capabilities { return Capabilities{TLS: true} }

type plainIn struct{ c net.Conn }

func (p plainIn) Close() error { return p.c.Close() }

type pipeOut struct{ c net.Conn }

func (p pipeOut) WritePacket(b net.Buffers) error { _, err := b.WriteTo(p.c); return err }
func (p pipeOut) Close() error                    { return p.c.Close() }

func (t *pipeTransport) Start(acc Acceptor) (string, error) {
	t.acc = acc
	return "pipe", nil
}

func (t *pipeTransport) Dial(ctx context.Context, _ string, req *Request, lost func(error)) (OutConn, *Reply, error) {
	client, server := net.Pipe()
	t.mu.Lock()
	t.open = append(t.open, client, server)
	t.mu.Unlock()
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		defer server.Close()
		br, a := acceptConn(t.acc, server, plainIn{server})
		if a == nil {
			return
		}
		a.Serve(br)
	}()
	return dialConn(client, req)
}

// acceptConn answers the handshake request on c (whose InConn is in) for the test
// transports; it returns the stream to serve and the acceptance, or a nil acceptance
// when the request was bad or refused.
func acceptConn(acc Acceptor, c net.Conn, in InConn) (*bufio.Reader, *Acceptance) {
	br := bufio.NewReader(c)
	r, err := ReadRequest(br)
	if err != nil {
		return nil, nil
	}
	rep, a := acc.Accept(r, in)
	if err := WriteReply(c, rep); err != nil || a == nil {
		if a != nil {
			a.Abort(err)
		}
		return nil, nil
	}
	return br, a
}

// dialConn sends the handshake request on c and reads the answer, for the test
// transports.
func dialConn(c net.Conn, req *Request) (OutConn, *Reply, error) {
	if err := WriteRequest(c, req); err != nil {
		return nil, nil, err
	}
	rep, err := ReadReply(c)
	if err != nil || rep.Code != ReplyAccepted {
		_ = c.Close()
		return nil, rep, err
	}
	return pipeOut{c}, rep, nil
}

func (t *pipeTransport) Close() error {
	t.mu.Lock()
	for _, c := range t.open {
		_ = c.Close()
	}
	t.mu.Unlock()
	t.wg.Wait()
	return nil
}

func TestDirectPortOverTransportWithoutDeadlines(t *testing.T) {
	defer goleak.VerifyNone(t)
	pt := ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationData, ipl.ReceiveExplicit,
		ipl.CommunicationReliable, ipl.CommunicationFIFO)
	cfg := &ipl.Config{Pool: "pipe", PortTypes: []ipl.PortType{pt}, Logger: zap.NewNop(),
		ListenHost: "127.0.0.1", ConnectTimeout: 10 * time.Second, MaxMessageSize: 1 << 20}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	in, err := Open(ctx, cfg, "pipe", &pipeTransport{})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	rp, err := in.CreateReceivePort(ctx, pt, "in")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := in.CreateSendPort(pt, "out")
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Connect(ctx, in.Identifier(), "in"); err != nil {
		t.Fatal(err)
	}
	for i := range int64(50) {
		w, err := sp.NewMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_ = w.WriteInt64(i)
			_, err := w.Finish()
			done <- err
		}()
		m, err := rp.Receive(ctx)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		v, err := m.ReadInt64()
		if _, ferr := m.Finish(); err != nil || ferr != nil || v != i {
			t.Fatalf("message %d: got %d, %v, %v", i, v, err, ferr)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
