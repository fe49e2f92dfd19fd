package core

import (
	"fmt"
	"io"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/ibisgo/ibis/serialization"
)

// Whole messages first. On a many-to-one port a message of at most WholeMessageLimit
// bytes (as it travels: headers and padding included) is handed to the receiver
// (Receive, Poll, an upcall) only once all of it has arrived, so that a sender that
// stops in the middle of one holds up no other sender: the port delivers the others'
// complete messages while the stall watchdog times the stopped one. A larger message,
// or one that arrives while the port's buffers for such messages already hold
// PortHighWater bytes, is handed out at its first packet and streams as before; a
// sender that stops in the middle of that one holds the port until it is cut. Each
// connection stays FIFO: its next message waits for its last one, as ever.
//
// A reader goroutine (readerDelivery) reads such a message ahead before it offers it.
// One that is already whole in the stream's read buffer (every message of up to a few
// KiB) is only scanned, not copied; a longer one is read into a buffer of the
// connection's, taken from a pool and grown as its bytes arrive, and given back once
// the program has read it. A transport's own Source follows the same rule
// (impl/nio/internal/inbox). Other ports (one-to-one, one-to-many) have only one
// sender, and keep handing out a message at its first packet.
const WholeMessageLimit = 256 << 10

// PortHighWater bounds the bytes one port holds read ahead of its receiver.
const PortHighWater = 4 << 20

// aheadMin is the first read-ahead buffer of a connection; it doubles, as bytes
// arrive, up to WholeMessageLimit.
const aheadMin = 16 << 10

// aheadSource is a connection's stream that can be read ahead: a *bufio.Reader (as
// sockets.Stream is), whose buffer is looked at before anything is copied.
type aheadSource interface {
	io.Reader
	Peek(n int) ([]byte, error)
	Buffered() int
	Discard(n int) (int, error)
	Size() int
}

// readAhead is the stream a reader goroutine's connection is read through on a
// many-to-one port: the bytes read ahead of the program (buf[off:]) first, then the
// source. Only the connection's reader goroutine touches it (fill between messages,
// Read and Discard through the serialization reader while a message is read, which
// is the same goroutine's turn: the goroutine waits while the program reads).
type readAhead struct {
	src  aheadSource
	held *atomic.Int64         // the bytes of all the port's read-ahead buffers
	g    *guardedReader        // the stall guard, which fill reports its waits to
	scan serialization.Scanner // a fresh scanner with the reader's limits
	buf  []byte                // bytes read ahead; buf[off:] not yet read
	off  int
	// want is the buffer the connection's last message read ahead needed: the next
	// one starts there instead of doubling up to it, copying on the way, again.
	want int
}

func newReadAhead(src aheadSource, maxMessage int64, held *atomic.Int64) *readAhead {
	return &readAhead{src: src, held: held,
		scan: serialization.NewScanner(serialization.WithReaderMaxMessageSize(maxMessage))}
}

// Read gives the bytes read ahead, then the source's.
func (a *readAhead) Read(p []byte) (int, error) {
	if a.off < len(a.buf) {
		n := copy(p, a.buf[a.off:])
		a.consumed(n)
		return n, nil
	}
	return a.src.Read(p)
}

// Discard skips n bytes, those read ahead first.
func (a *readAhead) Discard(n int) (int, error) {
	k := 0
	if a.off < len(a.buf) {
		k = min(n, len(a.buf)-a.off)
		a.consumed(k)
		if k == n {
			return k, nil
		}
	}
	d, err := a.src.Discard(n - k)
	return k + d, err
}

// consumed notes that n bytes of the buffer were read; an emptied buffer goes back.
func (a *readAhead) consumed(n int) {
	a.off += n
	if a.off == len(a.buf) {
		a.release()
	}
}

// release gives the buffer (and its share of the port's budget) back.
func (a *readAhead) release() {
	if a.buf == nil {
		return
	}
	a.held.Add(-int64(cap(a.buf)))
	if n := len(a.buf); n > 0 {
		a.want = aheadMin << max(0, bits.Len(uint(n-1))-bits.Len(aheadMin-1))
	}
	putAheadBuf(a.buf)
	a.buf, a.off = nil, 0
}

// fill reads the connection's next message ahead until it is whole, is larger than
// WholeMessageLimit, or the port's budget has no room for more; the reader is at a
// message boundary. It returns an error only when the stream ended (or the watchdog
// cut it) after the message had begun and before it was whole: such a message can
// never be read, and the connection ends without handing it out. Other errors are
// left for the serialization reader, which meets them where they are in the stream
// (nothing read ahead is lost).
func (a *readAhead) fill() error {
	scan := a.scan
	if a.off < len(a.buf) {
		// The start of this message came with the last one.
		if whole(&scan, a.buf[a.off:]) {
			return nil
		}
		a.buf = a.buf[:copy(a.buf, a.buf[a.off:])]
		a.off = 0
		return a.readOn(&scan, len(a.buf))
	}
	// The message in the source's buffer: scanned in place, not copied.
	fed := 0
	for {
		n := a.src.Buffered()
		if n > fed {
			b, _ := a.src.Peek(n)
			if fed == 0 && onePacket(b) {
				return nil
			}
			if whole(&scan, b[fed:]) {
				return nil
			}
			fed = n
			continue
		}
		if n == a.src.Size() {
			break // the source's buffer is full and the message goes on
		}
		a.g.waitFor()
		_, err := a.src.Peek(n + 1)
		if err = a.g.done(a.src.Buffered()-n, err); err != nil {
			return a.ended(fed, err)
		}
	}
	return a.readOn(&scan, fed)
}

// readOn reads the rest of the message into the buffer, fed bytes of which (the next
// to come from the source, or those the buffer holds) the scanner has seen.
func (a *readAhead) readOn(scan *serialization.Scanner, fed int) error {
	for {
		if len(a.buf) == cap(a.buf) {
			// Grown only once more bytes are there (in the source's buffer), so that
			// a sender that stops holds about what it sent, not twice that.
			if a.src.Buffered() == 0 {
				a.g.waitFor()
				_, err := a.src.Peek(1)
				if err = a.g.done(a.src.Buffered(), err); err != nil {
					return a.ended(fed, err)
				}
			}
			if !a.grow() {
				return nil // too large, or no room in the port's budget: it streams
			}
		}
		a.g.waitFor()
		n, err := a.src.Read(a.buf[len(a.buf):cap(a.buf)])
		err = a.g.done(n, err)
		a.buf = a.buf[:len(a.buf)+n]
		if len(a.buf) > fed {
			if whole(scan, a.buf[fed:]) {
				return nil
			}
			fed = len(a.buf)
		}
		if err != nil {
			return a.ended(fed, err)
		}
	}
}

// ended is fill's error for a stream that ended with fed bytes of an unfinished
// message: nil when none had come (the reader reports the end as usual).
func (a *readAhead) ended(fed int, err error) error {
	if fed == 0 {
		return nil
	}
	return fmt.Errorf("the connection ended in the middle of a message, after %d bytes: %w", fed, err)
}

// grow doubles the buffer, within WholeMessageLimit and the port's budget; it reports
// false when it may not.
func (a *readAhead) grow() bool {
	size := max(2*cap(a.buf), aheadMin)
	if cap(a.buf) == 0 {
		size = max(size, a.want)
	}
	if size > WholeMessageLimit {
		return false
	}
	more := int64(size - cap(a.buf))
	if a.held.Add(more) > PortHighWater {
		a.held.Add(-more)
		return false
	}
	nb := getAheadBuf(size)[:len(a.buf)]
	copy(nb, a.buf)
	if a.buf != nil {
		putAheadBuf(a.buf)
	}
	a.buf = nb
	return true
}

// onePacket reports whether p begins with a whole message of one packet: the common
// small message, found whole without the scanner.
func onePacket(p []byte) bool {
	size, flags, ok := serialization.Frame(p)
	return ok && flags&serialization.FlagEnd != 0 && size <= int64(len(p))
}

// whole feeds p to the scanner and reports whether the message ended in it (or the
// stream stopped: the reader will say why).
func whole(scan *serialization.Scanner, p []byte) bool {
	for len(p) > 0 {
		n, ev := scan.Feed(p)
		if ev&(serialization.ScanEnd|serialization.ScanStop) != 0 {
			return true
		}
		p = p[n:]
	}
	return false
}

// aheadPools hold read-ahead buffers by size: aheadMin << i, up to WholeMessageLimit
// (16 KiB << 4).
var aheadPools [5]sync.Pool

// aheadClass is the pool of a buffer of size bytes (a power of two times aheadMin).
func aheadClass(size int) int { return bits.TrailingZeros(uint(size / aheadMin)) }

func getAheadBuf(size int) []byte {
	if b, ok := aheadPools[aheadClass(size)].Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return make([]byte, 0, size)
}

func putAheadBuf(b []byte) {
	b = b[:0]
	aheadPools[aheadClass(cap(b))].Put(&b)
}
