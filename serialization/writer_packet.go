package serialization

import "fmt"

// Bounds on what a Writer keeps pending before it hands packets to its
// Sink: a message that alternates small values and bulk slices must not
// hold unbounded memory or vectors.
const (
	maxHeldPackets = 8   // sealed small packets waiting for the Sink
	maxPendingBufs = 512 // entries of the pending vectored write
)

// packetBuf holds one small packet while it is being filled and, once
// sealed, until the Sink has written it. Each typed section has its own
// buffer, so values of different types can be interleaved freely; a large
// packet's sections are sent as they are, a small one is first copied into
// one contiguous buffer (flat).
type packetBuf struct {
	hdr  [HeaderSize]byte
	sec  [numSections][]byte
	flat []byte // a small packet copied into one buffer (see flatLimit)
}

// flatLimit is the body size up to which a sealed packet is copied into one
// contiguous buffer: for a short message, copying a few hundred bytes costs
// less than the kernel's handling of several iovecs, and it keeps the
// latency of small messages close to that of a raw socket write.
const flatLimit = 1024

func (p *packetBuf) reset() {
	for i := range p.sec {
		p.sec[i] = p.sec[i][:0]
	}
}

// newPacketBuf returns an empty packet buffer, reusing a free one.
func (w *Writer) newPacketBuf() *packetBuf {
	if n := len(w.free); n > 0 {
		p := w.free[n-1]
		w.free[n-1] = nil
		w.free = w.free[:n-1]
		return p
	}
	return &packetBuf{}
}

// seal closes the open small packet (even an empty one) and queues it.
func (w *Writer) seal(flags byte) {
	p := w.cur
	var counts [numSections]uint32
	for i := range numSections {
		counts[i] = uint32(len(p.sec[i]) / secSize[i])
	}
	putHeader(p.hdr[:], w.orderByte, flags, &counts)
	padded := pad8(int64(w.body))
	pad := int(padded) - w.body
	if w.body <= flatLimit {
		f := append(p.flat[:0], p.hdr[:]...)
		for i := range numSections {
			f = append(f, p.sec[i]...)
		}
		f = append(f, zeroPad[:pad]...)
		p.flat = f
		w.pending = append(w.pending, f)
	} else {
		w.pending = append(w.pending, p.hdr[:])
		for i := range numSections {
			if len(p.sec[i]) > 0 {
				w.pending = append(w.pending, p.sec[i])
			}
		}
		if pad > 0 {
			w.pending = append(w.pending, zeroPad[:pad])
		}
	}
	size := HeaderSize + padded
	w.sealed += size
	w.held = append(w.held, p)
	w.heldBytes += int(size)
	w.pendingMsg = true
	w.cur = w.newPacketBuf()
	w.body = 0
	w.updateLimit()
}

// sendIfBusy hands pending packets to the Sink when they hold a full
// packet's worth of buffered bytes or too many entries; it keeps the
// memory a Writer holds bounded while still batching small packets with
// bulk packets into one vectored write.
func (w *Writer) sendIfBusy() error {
	if w.heldBytes >= w.cfg.maxPacket || len(w.held) >= maxHeldPackets || len(w.pending) >= maxPendingBufs {
		return w.send()
	}
	return nil
}

// send hands all pending packets to the Sink in one call.
func (w *Writer) send() error {
	if len(w.pending) == 0 {
		return nil
	}
	if w.pendingMsg {
		w.sentAny = true
	}
	err := w.sink.WritePacket(w.pending)
	w.endOwed = false // sent, or the connection failed: either way not owed
	w.dropPending()
	if err != nil {
		return w.fail(fmt.Errorf("serialization: sending packets: %w", err))
	}
	return nil
}

// dropPending forgets pending packets (sent or not) and recycles their
// buffers. Clearing the entries releases the caller's bulk slices.
func (w *Writer) dropPending() {
	clear(w.pending)
	w.pending = w.pending[:0]
	for i, p := range w.held {
		p.reset()
		w.free = append(w.free, p)
		w.held[i] = nil
	}
	w.held = w.held[:0]
	w.heldBytes = 0
	w.hdrs = w.hdrs[:0]
	w.pendingMsg = false
}

// fast returns n bytes at the end of section s of the open packet, or nil
// when they need the slow path (reserveSlow). It is small enough to be
// inlined into every primitive write.
func (w *Writer) fast(s, n int) []byte {
	sec := w.cur.sec[s]
	l := len(sec)
	if w.body+n > w.limit || l+n > cap(sec) {
		return nil
	}
	w.body += n
	w.cur.sec[s] = sec[:l+n]
	return sec[l : l+n]
}

func (w *Writer) reserveSlow(s, n int) ([]byte, error) {
	if err := w.ready(); err != nil {
		return nil, err
	}
	p := w.plan()
	p.small(int64(n), int64(n))
	if f := p.final(); f > w.cfg.maxMessage {
		return nil, w.tooLarge("a "+secDesc[s]+" value", f)
	}
	return w.space(s, n, n)
}

// space returns a chunk of at most want bytes (a positive multiple of esz)
// at the end of section s, sealing and sending the open packet first when
// not even one element fits. Callers have checked the message limit with a
// plan, so only the packet size can run out here.
func (w *Writer) space(s, want, esz int) ([]byte, error) {
	for {
		if avail := w.limit - w.body; avail >= esz {
			return w.extend(s, min(want, avail-avail%esz)), nil
		}
		if w.err != nil {
			return nil, w.err
		}
		if w.body+esz <= w.cfg.maxPacket || w.body == 0 {
			// Only a wrong plan gets here; refuse rather than overrun.
			return nil, fmt.Errorf("%w: message limit of %d bytes reached", ErrTooLarge, w.cfg.maxMessage)
		}
		w.seal(0)
		if err := w.send(); err != nil {
			return nil, err
		}
	}
}

// extend grows section s of the open packet by k bytes and returns them.
func (w *Writer) extend(s, k int) []byte {
	sec := w.cur.sec[s]
	l := len(sec)
	if l+k > cap(sec) {
		c := min(max(2*cap(sec), 256, l+k), max(w.cfg.maxPacket, l+k))
		grown := make([]byte, l, c)
		copy(grown, sec)
		sec = grown
	}
	sec = sec[:l+k]
	w.cur.sec[s] = sec
	w.body += k
	return sec[l:]
}

// emitSmall copies data (elements of esz bytes, native order) into
// section s, converting to the wire order, across as many packets as needed.
func (w *Writer) emitSmall(s int, data []byte, esz int) error {
	for len(data) > 0 {
		b, err := w.space(s, len(data), esz)
		if err != nil {
			return err
		}
		convertCopy(b, data[:len(b)], esz, w.swap)
		data = data[len(b):]
	}
	return nil
}

// useBulk reports whether n bytes of slice data go into bulk packets.
func (w *Writer) useBulk(n int64) bool {
	return w.cfg.bulkThreshold > 0 && n >= int64(w.cfg.bulkThreshold)
}

// bulkChunk is the largest body of one bulk packet of esz-byte elements.
// In native order a bulk body is the caller's memory and is limited only by
// the 32-bit count; in swapped order it is converted into a scratch buffer
// of bounded size and sent at once.
func (w *Writer) bulkChunk(esz int) int64 {
	c := maxBulkElems * int64(esz)
	if w.swap && esz > 1 {
		c = min(c, int64(max(w.cfg.maxPacket, w.cfg.bulkThreshold))&^7)
	}
	return c
}

// emitArr writes a slice's bytes (native order) as bulk or small data.
func (w *Writer) emitArr(s int, data []byte, esz int) error {
	if len(data) == 0 {
		return nil
	}
	if w.useBulk(int64(len(data))) {
		return w.emitBulk(s, data, esz)
	}
	return w.emitSmall(s, data, esz)
}

// emitBulk queues data as bulk packets after sealing the open packet. In
// native order the packet bodies are data itself: no copy.
func (w *Writer) emitBulk(s int, data []byte, esz int) error {
	if w.body > 0 {
		w.seal(0)
	}
	chunk := w.bulkChunk(esz)
	convert := w.swap && esz > 1
	for len(data) > 0 {
		n := int(min(int64(len(data)), chunk))
		body := data[:n]
		if convert {
			if cap(w.scratch) < n {
				w.scratch = make([]byte, n)
			}
			swapCopy(w.scratch[:n], body, esz)
			body = w.scratch[:n]
		}
		var counts [numSections]uint32
		counts[s] = uint32(n / esz)
		off := len(w.hdrs)
		w.hdrs = append(w.hdrs, make([]byte, HeaderSize)...)
		h := w.hdrs[off : off+HeaderSize : off+HeaderSize]
		putHeader(h, w.orderByte, FlagBulk, &counts)
		w.pending = append(w.pending, h, body)
		padded := pad8(int64(n))
		if pad := int(padded) - n; pad > 0 {
			w.pending = append(w.pending, zeroPad[:pad])
		}
		w.sealed += HeaderSize + padded
		w.pendingMsg = true
		data = data[n:]
		var err error
		if convert {
			err = w.send() // the scratch buffer is reused for the next chunk
		} else {
			err = w.sendIfBusy()
		}
		if err != nil {
			return err
		}
	}
	w.updateLimit()
	return nil
}
