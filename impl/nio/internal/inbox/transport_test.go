package inbox

import (
	"bufio"
	"context"
	"net"
	"sync"

	"github.com/ibisgo/ibis/impl/internal/core"
	"github.com/ibisgo/ibis/ipl"
)

// pushTransport is an in-memory transport whose receive ports read inboxes: a goroutine
// per connection pushes what arrives in chunks of at most chunk bytes, as an event loop
// would.
type pushTransport struct {
	chunk int
	mu    sync.Mutex
	acc   core.Acceptor
	wg    sync.WaitGroup
	open  []net.Conn
}

type pipeIn struct{ c net.Conn }

func (p pipeIn) Close() error { return p.c.Close() }

type pipeOut struct{ c net.Conn }

func (p pipeOut) WritePacket(b net.Buffers) error { _, err := b.WriteTo(p.c); return err }
func (p pipeOut) Close() error                    { return p.c.Close() }

func (t *pushTransport) Start(acc core.Acceptor) (string, error) {
	t.acc = acc
	return "pipe", nil
}

func (t *pushTransport) Capabilities() core.Capabilities {
	return core.Capabilities{Source: func(pt ipl.PortType) core.Source { return NewQueue(pt) }}
}

func (t *pushTransport) Dial(ctx context.Context, _ string, req *core.Request, lost func(error)) (core.OutConn, *core.Reply, error) {
	client, server := net.Pipe()
	t.mu.Lock()
	t.open = append(t.open, client, server)
	t.mu.Unlock()
	t.wg.Go(func() {
		defer server.Close()
		t.serve(server)
	})
	if err := core.WriteRequest(client, req); err != nil {
		return nil, nil, err
	}
	rep, err := core.ReadReply(client)
	if err != nil || rep.Code != core.ReplyAccepted {
		_ = client.Close()
		return nil, rep, err
	}
	return pipeOut{client}, rep, nil
}

// serve answers the handshake on c and pushes what follows into the connection's inbox.
func (t *pushTransport) serve(c net.Conn) {
	br := bufio.NewReader(c)
	r, err := core.ReadRequest(br)
	if err != nil {
		return
	}
	rep, a := t.acc.Accept(r, pipeIn{c})
	if err := core.WriteReply(c, rep); err != nil || a == nil {
		if a != nil {
			a.Abort(err)
		}
		return
	}
	b := New(a, nil)
	if b == nil {
		return
	}
	buf := make([]byte, t.chunk)
	for {
		n, err := br.Read(buf)
		b.Push(buf[:n])
		if err != nil {
			b.End(nil)
			return
		}
	}
}

func (t *pushTransport) Close() error {
	t.mu.Lock()
	for _, c := range t.open {
		_ = c.Close()
	}
	t.mu.Unlock()
	t.wg.Wait()
	return nil
}
