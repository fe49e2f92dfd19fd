package core

// The Inbox is the delivery of a push-mode connection (Acceptance.Inbox): an event
// loop pushes the connection's bytes into it (inbox.go), an inbox whose next message
// can start joins the port's FIFO of pending inboxes (pending.go), and whoever holds
// the port's token starts that message on its own goroutine (takePush). These are its
// delivery methods.

var _ delivery = (*Inbox)(nil)

// finished hands the inbox back to the event loop's side: the next message, if it can
// start, queues the inbox again; a message that broke the stream retires the
// connection.
func (b *Inbox) finished(m *readMessage) {
	if m.fatal != nil {
		b.port.retireInbox(b, m.fatal)
		return
	}
	b.released()
}

// cut ends the inbox as the watchdog gave up on the connection, so that its reader
// gets why instead of waiting for bytes the event loop will not push.
func (b *Inbox) cut(why error) { b.End(why) }
