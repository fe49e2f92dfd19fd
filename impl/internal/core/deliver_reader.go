package core

import "io"

// readerDelivery is the delivery of a connection that a goroutine of the transport
// reads (Acceptance.Serve): it starts each message, offers it on the port's ready
// channel to whoever holds the token, and waits until the message is finished before
// it reads on. The reader being the only one to touch the stream between messages
// keeps the connection FIFO; the token makes sure one message of the port lives at a
// time. On a many-to-one port it reads each message ahead before it offers it, so
// that the port gets the message whole (readahead.go).
type readerDelivery struct {
	ic   *inConn
	done chan struct{} // the delivered message was finished (buffered: one)
}

var _ delivery = (*readerDelivery)(nil)

// serve reads the connection's messages until it ends or the port closes, then closes
// the connection.
func (d *readerDelivery) serve(r io.Reader) {
	ic, p := d.ic, d.ic.port
	defer ic.c.Close()
	var ahead *readAhead
	if src, ok := r.(aheadSource); ok && p.manyToOne {
		ahead = newReadAhead(src, p)
		defer ahead.release()
		r = ahead
	}
	ic.readFrom(r)
	for {
		if p.isClosed() {
			p.connEnded(ic, nil)
			return
		}
		ic.guard.boundary()
		if ahead != nil {
			ahead.g = ic.guard
			if err := ahead.fill(); err != nil { // whole messages first (readahead.go)
				p.connEnded(ic, err)
				return
			}
		}
		m, err := p.startMessage(ic, d)
		if err != nil {
			p.connEnded(ic, err)
			return
		}
		select {
		case p.ready <- m:
		case <-p.closed:
			p.connEnded(ic, nil)
			return
		}
		select {
		case <-d.done:
		case <-p.closed:
			p.connEnded(ic, nil)
			return
		}
		if m.fatal != nil {
			p.connEnded(ic, m.fatal)
			return
		}
	}
}

// finished lets the reader go on to the next message (or end the connection, when m
// broke the stream).
func (d *readerDelivery) finished(*readMessage) { d.done <- struct{}{} }

// waiting reports the reader's wait, as the guard of its stream records it.
func (d *readerDelivery) waiting() (waiting, mid bool) { return d.ic.watchWaiting() }

// cut needs nothing more: closing the connection ends the reader's wait.
func (d *readerDelivery) cut(error) {}
