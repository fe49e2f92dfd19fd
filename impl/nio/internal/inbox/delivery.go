package inbox

import "github.com/ibisgo/ibis/impl/internal/core"

// An Inbox is its connection's core.Delivery: the port hands it back through these.

var _ core.Delivery = (*Inbox)(nil)

// Finished hands the inbox back to the event loop's side: the next message, if it can
// start, queues the inbox again; a message that broke the stream (or could not start)
// retires the connection.
func (b *Inbox) Finished(fatal error) {
	if fatal != nil {
		b.retire(fatal)
		return
	}
	b.released()
}

// Cut ends the inbox as the watchdog gave up on the connection, so that its reader
// gets why instead of waiting for bytes the event loop will not push.
func (b *Inbox) Cut(why error) { b.End(why) }

// Holds reports whether the inbox holds something its port can still deliver: a whole
// message waits in it, or a reader that owns it has not read all it holds.
func (b *Inbox) Holds() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == inboxOwned {
		return b.n > 0
	}
	return b.starts > 0
}

// retire drops a connection that ended or broke.
func (b *Inbox) retire(err error) {
	b.mu.Lock()
	b.to(inboxRetired)
	if b.flow == flowParked {
		b.flowTo(flowPaused) // its entry in the parked list is skipped
	}
	b.mu.Unlock()
	b.c.Retire(err)
	b.discard()
}

// cutErr returns why the stall watchdog cut the connection, or nil.
func (b *Inbox) cutErr() error { return b.c.CutErr() }
