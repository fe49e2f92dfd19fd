package serialization

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
	"strings"
	"sync"
)

// fill reads exactly len(b) bytes of the current packet from the stream.
func (r *Reader) fill(b []byte, what string) error {
	n, err := io.ReadFull(r.src, b)
	r.consumed += int64(n)
	if err == nil {
		return nil
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return r.fail(corruptf("truncated %s: the stream ended after %d of %d bytes", what, n, len(b)))
	}
	return r.fail(fmt.Errorf("serialization: reading %s: %w", what, err))
}

// nextPacket reads the header (and small body) of the message's next packet.
func (r *Reader) nextPacket() error {
	if err := r.fill(r.hdr[:], "packet header"); err != nil {
		return err
	}
	return r.parse()
}

// parse validates the header in r.hdr (framing.next decides, for the Reader and the
// Scanner alike) and reads a small packet's body or prepares to stream a bulk packet's
// body.
func (r *Reader) parse() error {
	h := &r.hdr
	var ph packetHeader
	if err := r.frm.next(h, &ph); err != nil {
		if err == ErrClosedByPeer {
			r.cfg.log.Debug("serialization: peer closed the stream")
		}
		return r.fail(err)
	}
	flags, body, padded := ph.flags, ph.body, ph.padded
	bulk := flags&FlagBulk != 0
	r.swap = (h[1] == orderLittle) != nativeLittle
	r.last = flags&FlagEnd != 0
	r.off = [numSections]int{}
	r.end = [numSections]int{}
	if bulk {
		r.bulkSec, r.bulkLeft, r.bulkPad = ph.bulkSec, body, int(padded-body)
		return nil
	}
	b, err := r.readBody(int(padded))
	if err != nil {
		return err
	}
	for _, c := range b[body:] {
		if c != 0 {
			return r.fail(corruptf("packet padding is not zero: % x", b[body:]))
		}
	}
	o := 0
	for i := range numSections {
		r.off[i] = o
		o += int(ph.counts[i]) * secSize[i]
		r.end[i] = o
	}
	return nil
}

// bodyStart is the first buffer a small packet's body is read into when the reader
// has none large enough; it doubles as the bytes come.
const bodyStart = 4 << 10

// readBody reads a small packet's body of n bytes into the reader's 8-byte aligned
// buffer. A buffer too small grows with the bytes that actually arrive (doubling, from
// bodyStart), not with what the header announced: a peer that sends headers announcing
// 64 KiB bodies and nothing more makes the receiver hold a few KiB per connection, not
// 64 KiB. The buffer is kept for the next packets.
func (r *Reader) readBody(n int) ([]byte, error) {
	if cap(r.buf) >= n {
		b := r.buf[:n]
		return b, r.fill(b, "packet body")
	}
	have := 0
	for c := max(cap(r.buf), min(n, bodyStart)); ; c = min(n, 2*c) {
		if cap(r.buf) < c {
			nb := getBody(c)
			copy(nb, r.buf[:have])
			putBody(r.buf)
			r.buf = nb
		}
		if err := r.fill(r.buf[have:c], "packet body"); err != nil {
			return nil, err
		}
		if have = c; have == n {
			return r.buf[:n], nil
		}
	}
}

// keepBody is the largest body buffer a Reader keeps between messages. A larger one
// goes back to a pool when its message is finished, so that an idle connection (a
// thousand of them on a many-to-one port) holds no packet-sized buffer, and the
// next large packet, of any connection, takes one from the pool.
const keepBody = 8 << 10

// bodyPools hold 8-byte aligned body buffers of bodyStart << i bytes, up to
// DefaultReaderMaxPacketSize; larger ones are left to the collector.
var bodyPools [9]sync.Pool

// bodyClass is the pool of buffers of at least n bytes, or -1 when n is over them.
func bodyClass(n int) int {
	if n > bodyStart<<(len(bodyPools)-1) {
		return -1
	}
	return bits.Len(uint(max(n, bodyStart)-1)) - bits.Len(bodyStart-1)
}

// smallBody is the least buffer a body is read into. A body under bodyStart gets a
// buffer of its own, of the next power of two from here: an idle connection that
// has read only small messages (a hello) holds that, not a pooled bodyStart.
const smallBody = 64

// getBody returns an 8-byte aligned buffer of at least n bytes.
func getBody(n int) []byte {
	if n < bodyStart {
		size := smallBody
		for size < n {
			size <<= 1
		}
		return AsBytes(make([]uint64, size/8))
	}
	k := bodyClass(n)
	if k < 0 {
		return AsBytes(make([]uint64, (n+7)/8))
	}
	if b, ok := bodyPools[k].Get().(*[]byte); ok {
		return *b
	}
	return AsBytes(make([]uint64, (bodyStart<<k)/8))
}

// putBody gives a buffer of getBody's back (nil, or one of another size, is dropped).
func putBody(b []byte) {
	if k := bodyClass(cap(b)); k >= 0 && cap(b) == bodyStart<<k {
		b = b[:cap(b)]
		bodyPools[k].Put(&b)
	}
}

// releaseBody gives a large body buffer back once its message is finished.
func (r *Reader) releaseBody() {
	if cap(r.buf) > keepBody {
		putBody(r.buf)
		r.buf = nil
	}
}

// bulkRead accounts for n bytes of the bulk body read and, at its end,
// reads and checks the padding.
func (r *Reader) bulkRead(n int64) error {
	r.bulkLeft -= n
	if r.bulkLeft > 0 || r.bulkPad == 0 {
		return nil
	}
	pad := r.scr[:r.bulkPad]
	r.bulkPad = 0
	if err := r.fill(pad, "bulk packet padding"); err != nil {
		return err
	}
	for _, c := range pad {
		if c != 0 {
			return r.fail(corruptf("bulk packet padding is not zero: % x", pad))
		}
	}
	return nil
}

// fast returns the next n bytes (one element) of section s of a small
// packet, or nil when they need the slow path (takeSlow). It is small
// enough to be inlined into every primitive read.
func (r *Reader) fast(s, n int) []byte {
	o := r.off[s]
	if o+n > r.end[s] {
		return nil
	}
	r.off[s] = o + n
	return r.buf[o : o+n]
}

// take returns the next n bytes (one element) of section s.
func (r *Reader) take(s, n int, what string) ([]byte, error) {
	if b := r.fast(s, n); b != nil {
		return b, nil
	}
	return r.takeSlow(s, n, what)
}

func (r *Reader) takeSlow(s, n int, what string) ([]byte, error) {
	for {
		if o := r.off[s]; o+n <= r.end[s] {
			r.off[s] = o + n
			return r.buf[o : o+n], nil
		}
		if r.bulkLeft > 0 && r.bulkSec == s {
			b := r.scr[:n]
			if err := r.fill(b, "bulk packet body"); err != nil {
				return nil, err
			}
			if err := r.bulkRead(int64(n)); err != nil {
				return nil, err
			}
			return b, nil
		}
		if err := r.advance(s, what); err != nil {
			return nil, err
		}
	}
}

// advance moves to the next packet when section s is exhausted, unless the
// read cannot be the one that was written.
func (r *Reader) advance(s int, what string) error {
	if r.err != nil {
		return r.err
	}
	if !r.inMsg {
		return fmt.Errorf("%w: reading %s: no message is open (call Next first)", ErrShortMessage, what)
	}
	if rem := r.unread(); rem != "" {
		return mismatchf("reading %s, but the packet still holds unread %s; reads must mirror the writes", what, rem)
	}
	if r.last {
		return fmt.Errorf("%w: reading %s: all %d bytes of the message have been read", ErrShortMessage, what, r.consumed)
	}
	return r.nextPacket()
}

// unread describes the data left in the current packet ("" if none).
func (r *Reader) unread() string {
	var parts []string
	for i := range numSections {
		if n := (r.end[i] - r.off[i]) / secSize[i]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s value(s)", n, secDesc[i]))
		}
	}
	if r.bulkLeft > 0 {
		parts = append(parts, fmt.Sprintf("%d %s value(s)", r.bulkLeft/int64(secSize[r.bulkSec]), secDesc[r.bulkSec]))
	}
	return strings.Join(parts, " and ")
}

// readInto fills dst (elements of esz bytes) from section s, across packets,
// converting to native order. Bulk data is read straight into dst.
func (r *Reader) readInto(s int, dst []byte, esz int, what string) error {
	for len(dst) > 0 {
		if o, e := r.off[s], r.end[s]; o < e {
			n := min(e-o, len(dst))
			convertCopy(dst[:n], r.buf[o:o+n], esz, r.swap)
			r.off[s] = o + n
			dst = dst[n:]
			continue
		}
		if r.bulkLeft > 0 && r.bulkSec == s {
			n := int(min(r.bulkLeft, int64(len(dst))))
			if err := r.fill(dst[:n], "bulk packet body"); err != nil {
				return err
			}
			if r.swap && esz > 1 {
				swapCopy(dst[:n], dst[:n], esz)
			}
			if err := r.bulkRead(int64(n)); err != nil {
				return err
			}
			dst = dst[n:]
			continue
		}
		if err := r.advance(s, what); err != nil {
			return err
		}
	}
	return nil
}

// skipIn discards n bytes of section s, across packets.
func (r *Reader) skipIn(s int, n int64, what string) error {
	for n > 0 {
		if o, e := r.off[s], r.end[s]; o < e {
			k := int(min(int64(e-o), n))
			r.off[s] = o + k
			n -= int64(k)
			continue
		}
		if r.bulkLeft > 0 && r.bulkSec == s {
			k := min(r.bulkLeft, n)
			if err := r.discard(k); err != nil {
				return err
			}
			if err := r.bulkRead(k); err != nil {
				return err
			}
			n -= k
			continue
		}
		if err := r.advance(s, what); err != nil {
			return err
		}
	}
	return nil
}

// discard skips n bytes of the stream.
func (r *Reader) discard(n int64) error {
	for n > 0 {
		k := int(min(n, 1<<30))
		var got int
		var err error
		if r.disc != nil {
			got, err = r.disc.Discard(k)
		} else {
			if r.skip == nil {
				r.skip = make([]byte, skipBufSize)
			}
			got, err = io.ReadFull(r.src, r.skip[:min(k, len(r.skip))])
		}
		r.consumed += int64(got)
		n -= int64(got)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return r.fail(corruptf("truncated bulk packet body: the stream ended %d bytes early", n))
			}
			return r.fail(fmt.Errorf("serialization: skipping bulk packet body: %w", err))
		}
	}
	return nil
}

// budget is the most data the rest of the message can still hold: what
// the limit allows beyond the packets announced so far, plus the unread
// data of the current packet. Reads allocate no more than this.
func (r *Reader) budget() int64 {
	b := r.cfg.maxMessage - r.frm.msgBytes + r.bulkLeft
	for i := range numSections {
		b += int64(r.end[i] - r.off[i])
	}
	return b
}
