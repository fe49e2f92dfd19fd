package main

import (
	"fmt"
	"slices"
)

// tracker keeps the receiver's account of every send port (stream) of the pool: which of
// its messages came, in which order, and its end.
type tracker struct {
	senders  map[int32]bool // join numbers of the sender processes
	ports    int            // send ports per sender
	messages int64          // data messages per send port
	streams  map[streamKey]*stream
	ended    int // streams whose end came
	// counts over all streams
	received, distinct, reordered, duplicates, corrupt int64
}

// stream is one send port's account.
type stream struct {
	seen   []uint64 // bit seq: message seq came
	maxSeq int64    // the highest sequence number that came, -1 before the first
	end    *endInfo // its last message, nil until it came
}

func newTracker(senders []int32, ports int, messages int64) *tracker {
	t := &tracker{senders: map[int32]bool{}, ports: ports, messages: messages, streams: map[streamKey]*stream{}}
	for _, s := range senders {
		t.senders[s] = true
	}
	return t
}

// streamOf returns k's account, or nil when k names no send port of the pool.
func (t *tracker) streamOf(k streamKey) *stream {
	if st := t.streams[k]; st != nil {
		return st
	}
	if !t.senders[k.sender] || k.port < 0 || int(k.port) >= t.ports {
		return nil
	}
	st := &stream{seen: make([]uint64, (t.messages+63)/64), maxSeq: -1}
	t.streams[k] = st
	return st
}

// data counts a data message; good says its count and values were right.
func (t *tracker) data(k streamKey, seq int64, good bool) {
	t.received++
	st := t.streamOf(k)
	if st == nil || seq < 0 || seq >= t.messages || !good || st.end != nil {
		t.corrupt++ // a message from nobody, out of range, damaged, or after its port's end
		return
	}
	word, bit := seq/64, uint64(1)<<(seq%64)
	switch {
	case st.seen[word]&bit != 0:
		t.duplicates++
		return
	case seq < st.maxSeq:
		t.reordered++ // came after a later message of its port
	default:
		st.maxSeq = seq
	}
	st.seen[word] |= bit
	t.distinct++
}

// end records a send port's last message; it returns an error for an end from nobody
// or a second end.
func (t *tracker) end(k streamKey, e endInfo) error {
	st := t.streamOf(k)
	if st == nil {
		t.corrupt++
		return fmt.Errorf("end message from %v, which is no send port of this pool", k)
	}
	if st.end != nil {
		t.duplicates++
		return fmt.Errorf("second end message from %v", k)
	}
	st.end = &e
	t.ended++
	return nil
}

// done reports whether every send port's end came.
func (t *tracker) done() bool {
	return t.ended == len(t.senders)*t.ports
}

// expected is the number of data messages the pool sends.
func (t *tracker) expected() int64 {
	return int64(len(t.senders)*t.ports) * t.messages
}

// lost is the number of data messages that never came (or came damaged).
func (t *tracker) lost() int64 {
	return t.expected() - t.distinct
}

// ok reports whether everything came once, in order and intact.
func (t *tracker) ok() bool {
	return t.done() && t.lost() == 0 && t.reordered == 0 && t.duplicates == 0 && t.corrupt == 0
}

// shortEnds lists the send ports whose end says they sent fewer messages than asked.
func (t *tracker) shortEnds() []string {
	var out []string
	for k, st := range t.streams {
		if st.end != nil && st.end.sent != t.messages {
			out = append(out, fmt.Sprintf("sender %d port %d sent %d of %d", k.sender, k.port, st.end.sent, t.messages))
		}
	}
	slices.Sort(out)
	return out
}

// missing describes the send ports whose end has not come: how many of their messages
// came, for a diagnosis of a stall.
func (t *tracker) missing() []string {
	var out []string
	for s := range t.senders {
		for p := range t.ports {
			k := streamKey{s, int32(p)}
			st := t.streams[k]
			switch {
			case st == nil:
				out = append(out, fmt.Sprintf("sender %d port %d: nothing came", s, p))
			case st.end == nil:
				out = append(out, fmt.Sprintf("sender %d port %d: no end, highest message %d of %d", s, p, st.maxSeq, t.messages))
			}
		}
	}
	slices.Sort(out)
	return out
}

// senderPeaks returns every sender process's peak RSS as its ends said (the largest
// over its ports), by launch rank (or join number when the rank is unknown).
func (t *tracker) senderPeaks() map[string]int64 {
	peaks := map[string]int64{}
	for k, st := range t.streams {
		if st.end == nil {
			continue
		}
		name := fmt.Sprintf("rank %d", st.end.rank)
		if st.end.rank < 0 {
			name = fmt.Sprintf("member %d", k.sender)
		}
		peaks[name] = max(peaks[name], st.end.peakRSS)
	}
	return peaks
}
