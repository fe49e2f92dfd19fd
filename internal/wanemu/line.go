package wanemu

import "time"

// held is a packet in a delay line and the time it may leave.
type held struct {
	pkt []byte
	due time.Time
}

// line is the delay line of one pair of sites: a FIFO that keeps at most limit bytes.
// Packets leave in the order they came, each no earlier than its due time; a packet with
// an earlier due time behind a later one (the delay was lowered) waits for it, so that
// the pair's order is kept.
type line struct {
	q     []held
	head  int
	bytes int
	limit int
}

// push appends pkt, due at due; false (nothing kept) where it would exceed the bound.
func (l *line) push(pkt []byte, due time.Time) bool {
	if l.bytes+len(pkt) > l.limit {
		return false
	}
	if l.head > 0 && l.head == len(l.q) {
		l.q, l.head = l.q[:0], 0
	}
	l.q = append(l.q, held{pkt: pkt, due: due})
	l.bytes += len(pkt)
	return true
}

// next returns the due time of the first packet; ok is false when the line is empty.
func (l *line) next() (time.Time, bool) {
	if l.head == len(l.q) {
		return time.Time{}, false
	}
	return l.q[l.head].due, true
}

// popDue appends to out the packets due at now or before, in order, and removes them.
func (l *line) popDue(now time.Time, out []held) []held {
	for l.head < len(l.q) && !l.q[l.head].due.After(now) {
		h := &l.q[l.head]
		out = append(out, *h)
		l.bytes -= len(h.pkt)
		*h = held{}
		l.head++
	}
	if l.head == len(l.q) {
		l.q, l.head = l.q[:0], 0
	} else if l.head > 1024 && l.head*2 > len(l.q) {
		n := copy(l.q, l.q[l.head:])
		clear(l.q[n:])
		l.q, l.head = l.q[:n], 0
	}
	return out
}

// drain empties the line and returns how many bytes it held.
func (l *line) drain() int {
	b := l.bytes
	clear(l.q)
	l.q, l.head, l.bytes = l.q[:0], 0, 0
	return b
}
