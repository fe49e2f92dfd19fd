package nio

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/panjf2000/gnet/v2"

	"github.com/ibisgo/ibis/impl/internal/core"
	"github.com/ibisgo/ibis/ipl"
)

// inHandle is the receive side's handle on an incoming connection: the socket while the
// handshake runs, the event loop's connection once it was enrolled.
type inHandle struct {
	mu     sync.Mutex
	nc     net.Conn
	gc     gnet.Conn
	closed bool
}

func (h *inHandle) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	if h.gc != nil {
		return h.gc.Close()
	}
	return h.nc.Close()
}

// enrolled records the event loop's connection; it reports false when the port closed
// the connection meanwhile (the caller then closes gc).
func (h *inHandle) enrolled(gc gnet.Conn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.gc = gc
	return !h.closed
}

// inbound is the event loop's side of an incoming connection: it pushes what the
// socket brings into the connection's inbox.
type inbound struct {
	box *core.Inbox
}

func (in *inbound) traffic(c gnet.Conn) gnet.Action {
	b, err := c.Next(-1)
	if err != nil {
		return gnet.Close
	}
	in.box.Push(b)
	return gnet.None
}

func (in *inbound) closed(err error) {
	if err != nil && !errors.Is(err, io.EOF) {
		err = fmt.Errorf("%w: %w", ipl.ErrConnectionLost, err)
		in.box.End(err)
		return
	}
	in.box.End(nil)
}
