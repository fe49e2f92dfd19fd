package core

import (
	"bufio"
	"bytes"
	"io"
	"sync/atomic"
	"testing"

	"github.com/ibisgo/ibis/serialization"
)

// aheadMessage is one message of the read-ahead test stream: int64 values 0..n-1,
// written one by one or as one array.
type aheadMessage struct {
	n     int
	array bool
}

// aheadStream writes the messages as a sender would and returns the bytes of each.
func aheadStream(t *testing.T, msgs []aheadMessage) [][]byte {
	t.Helper()
	var out [][]byte
	for _, am := range msgs {
		var buf bytes.Buffer
		w := serialization.NewWriter(serialization.KindData, serialization.NewStreamSink(&buf))
		vals := make([]int64, am.n)
		for i := range vals {
			vals[i] = int64(i)
		}
		if am.array {
			if err := w.WriteArray(vals); err != nil {
				t.Fatal(err)
			}
		} else {
			for _, v := range vals {
				if err := w.WriteInt64(v); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := w.Finish(); err != nil {
			t.Fatal(err)
		}
		out = append(out, bytes.Clone(buf.Bytes()))
	}
	return out
}

// newTestAhead reads ahead from r through a bufio.Reader of the transports' size.
func newTestAhead(r io.Reader) *readAhead {
	return &readAhead{src: bufio.NewReaderSize(r, 8<<10), held: new(atomic.Int64),
		g: &guardedReader{w: &stallWatch{}}, scan: serialization.NewScanner()}
}

// TestReadAheadWaitsForWholeMessages: fill returns only once a message of up to
// WholeMessageLimit is whole (its last byte held back until then), and at once for a
// larger one; the messages read through the read-ahead are intact and in order,
// whether their start came with the message before or not. The pipe's writes return
// only once fill has taken their bytes, so a fill that returned early is seen.
func TestReadAheadWaitsForWholeMessages(t *testing.T) {
	msgs := []aheadMessage{{n: 3}, {n: 12000}, {n: 8192, array: true}, {n: 5}, {n: 40000, array: true}, {n: 7}}
	wire := aheadStream(t, msgs)
	pr, pw := io.Pipe()
	defer pr.Close()
	a := newTestAhead(pr)
	rd := serialization.NewReader(serialization.KindData, a)
	for i, am := range msgs {
		b := wire[i]
		large := len(b) > WholeMessageLimit
		filled := make(chan error, 1)
		go func() { filled <- a.fill() }()
		wrote := make(chan error, 1)
		go func() {
			if large {
				_, err := pw.Write(b) // fill returns before all of it is taken
				wrote <- err
				return
			}
			if _, err := pw.Write(b[:len(b)-1]); err != nil {
				wrote <- err
				return
			}
			select {
			case <-filled:
				t.Errorf("message %d (%d bytes): fill returned before its last byte", i, len(b))
				wrote <- nil
				return
			default:
			}
			_, err := pw.Write(b[len(b)-1:])
			wrote <- err
		}()
		if !large {
			if err := <-wrote; err != nil {
				t.Fatal(err)
			}
		}
		if err := <-filled; err != nil {
			t.Fatalf("message %d: fill: %v", i, err)
		}
		if err := rd.Next(); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		got := make([]int64, am.n)
		if am.array {
			if err := rd.ReadArray(got); err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
		} else {
			for k := range got {
				v, err := rd.ReadInt64()
				if err != nil {
					t.Fatalf("message %d value %d: %v", i, k, err)
				}
				got[k] = v
			}
		}
		for k, v := range got {
			if v != int64(k) {
				t.Fatalf("message %d value %d is %d", i, k, v)
			}
		}
		if err := rd.Finish(); err != nil {
			t.Fatal(err)
		}
		if large {
			if err := <-wrote; err != nil {
				t.Fatal(err)
			}
		}
	}
	a.release()
	if h := a.held.Load(); h != 0 {
		t.Errorf("%d bytes of the port's budget still held", h)
	}
}

// TestReadAheadWithinBudget: with the port's budget used up, a message longer than
// the read buffer is not read ahead: fill returns as soon as the buffer is full.
func TestReadAheadWithinBudget(t *testing.T) {
	wire := aheadStream(t, []aheadMessage{{n: 12000}})
	pr, pw := io.Pipe()
	defer pr.Close()
	a := newTestAhead(pr)
	a.held.Store(PortHighWater)
	go func() { _, _ = pw.Write(wire[0]) }()
	if err := a.fill(); err != nil {
		t.Fatal(err)
	}
	if a.buf != nil {
		t.Errorf("read ahead %d bytes with no room in the port's budget", len(a.buf))
	}
}

// TestReadAheadEndInsideMessage: a stream that ends in the middle of a message is an
// error of fill (the message is never handed out); one that ends between messages is
// left to the reader.
func TestReadAheadEndInsideMessage(t *testing.T) {
	wire := aheadStream(t, []aheadMessage{{n: 12000}})
	a := newTestAhead(bytes.NewReader(wire[0][:len(wire[0])/2]))
	if err := a.fill(); err == nil {
		t.Error("fill of half a message ended by the stream returned nil")
	}
	a.release()
	b := newTestAhead(bytes.NewReader(nil))
	if err := b.fill(); err != nil {
		t.Errorf("fill at the end of the stream: %v, want nil (the reader reports it)", err)
	}
}

// TestReadAheadCarriesTheNextStart: bytes read ahead past a message's end (the start of
// the next ones, even whole ones) are the next fill's, and every message reads intact.
func TestReadAheadCarriesTheNextStart(t *testing.T) {
	msgs := []aheadMessage{{n: 12000}, {n: 3}, {n: 20000, array: true}, {n: 2}, {n: 12000}}
	a := newTestAhead(bytes.NewReader(bytes.Join(aheadStream(t, msgs), nil)))
	rd := serialization.NewReader(serialization.KindData, a)
	for i, am := range msgs {
		if err := a.fill(); err != nil {
			t.Fatalf("message %d: fill: %v", i, err)
		}
		if err := rd.Next(); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		got := make([]int64, am.n)
		if am.array {
			if err := rd.ReadArray(got); err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
		} else {
			for k := range got {
				got[k], _ = rd.ReadInt64()
			}
		}
		for k, v := range got {
			if v != int64(k) {
				t.Fatalf("message %d value %d is %d", i, k, v)
			}
		}
		if err := rd.Finish(); err != nil {
			t.Fatal(err)
		}
	}
}
