package core

import "io"

// readerDelivery is the delivery of a connection that a goroutine of the transport
// reads (Acceptance.Serve): it starts each message, offers it on its streamSource's
// ready channel to whoever holds the token, and waits until the message is finished
// before it reads on, so the reader alone touches the stream between messages and the
// connection stays FIFO. On a many-to-one port it reads each message ahead before it
// offers it, so that the port gets the message whole (readahead.go).
type readerDelivery struct {
	ic   *inConn
	src  *streamSource
	done chan error // the delivered message was finished, with its fatal error (buffered: one)
}

var _ Delivery = (*readerDelivery)(nil)

// serve reads the connection's messages until it ends or the port closes, then closes
// the connection.
func (d *readerDelivery) serve(r io.Reader) {
	ic, p := d.ic, d.ic.port
	defer ic.c.Close()
	var ahead *readAhead
	if src, ok := r.(aheadSource); ok && p.manyToOne {
		ahead = newReadAhead(src, p.in.cfg.MaxMessageSize, &d.src.aheadHeld)
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
		case d.src.ready <- m:
		case <-p.closed:
			p.connEnded(ic, nil)
			return
		}
		var fatal error
		select {
		case fatal = <-d.done:
		case <-p.closed:
			p.connEnded(ic, nil)
			return
		}
		if fatal != nil {
			p.connEnded(ic, fatal)
			return
		}
	}
}

// Finished lets the reader go on to the next message (or end the connection, when the
// message broke the stream).
func (d *readerDelivery) Finished(fatal error) { d.done <- fatal }

// Waiting reports the reader's wait, as the guard of its stream records it.
func (d *readerDelivery) Waiting() (waiting, mid bool) { return d.ic.watchWaiting() }

// Holds is false: the reader hands its message out as soon as it has read it ahead.
func (d *readerDelivery) Holds() bool { return false }

// Cut needs nothing more: closing the connection ends the reader's wait.
func (d *readerDelivery) Cut(error) {}
