package core

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// pipeStream is a DirectStream over one end of a net.Pipe.
type pipeStream struct {
	*bufio.Reader
	c net.Conn
}

func (s pipeStream) SetReadDeadline(t time.Time) error { return s.c.SetReadDeadline(t) }

func newWatchedPipe(t *testing.T) (*cancelWatch, pipeStream, net.Conn) {
	t.Helper()
	a, b := net.Pipe()
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	s := pipeStream{Reader: bufio.NewReader(a), c: a}
	return &cancelWatch{stream: s}, s, b
}

// write sends p on c from another goroutine (a pipe write waits for its reader) and
// returns the channel its result comes on.
func write(c net.Conn, p []byte) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := c.Write(p)
		done <- err
	}()
	return done
}

// awaitPeeking waits until a Receive peeks on w.
func awaitPeeking(w *cancelWatch) {
	for {
		w.mu.Lock()
		p := w.peeking
		w.mu.Unlock()
		if p {
			return
		}
		runtime.Gosched()
	}
}

// TestCancelWatchCancelLeavesStreamIntact: a peek whose context ends while it waits
// returns cancelled having consumed nothing, the deadline it set is cleared, and the
// next peek (with another context, or none) gets the bytes that come.
func TestCancelWatchCancelLeavesStreamIntact(t *testing.T) {
	defer goleak.VerifyNone(t)
	w, s, peer := newWatchedPipe(t)
	defer w.close()
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan bool, 1)
	go func() {
		cancelled, err := w.peek(ctx, 4)
		if err != nil {
			t.Errorf("cancelled peek: %v", err)
		}
		got <- cancelled
	}()
	awaitPeeking(w)
	cancel()
	if !<-got {
		t.Fatal("peek not cancelled when its context ended")
	}
	if cancelled, err := w.peek(ctx, 4); !cancelled || err != nil {
		t.Fatalf("peek with an ended context: cancelled %v, %v", cancelled, err)
	}
	sent := write(peer, []byte("abcdefgh"))
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	for _, c := range []context.Context{ctx2, context.Background()} {
		if cancelled, err := w.peek(c, 4); cancelled || err != nil {
			t.Fatalf("peek after a cancelled one: cancelled %v, %v", cancelled, err)
		}
		buf := make([]byte, 4)
		if _, err := io.ReadFull(s, buf); err != nil {
			t.Fatal(err)
		}
		if c == ctx2 && string(buf) != "abcd" || c != ctx2 && string(buf) != "efgh" {
			t.Fatalf("read %q after the cancelled peek", buf)
		}
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
}

// watchKey is a context key of the tests.
type watchKey struct{}

// TestCancelWatchKeepsRegistration: a registration is kept once two peeks in a row
// passed contexts with the same Done channel, and then serves the peeks that follow; a
// context unlike the last one's is registered only while its peek waits; a context
// that ends while nobody peeks leaves no deadline behind for the next peek.
func TestCancelWatchKeepsRegistration(t *testing.T) {
	defer goleak.VerifyNone(t)
	w, s, peer := newWatchedPipe(t)
	ctx1, cancel1 := context.WithCancel(context.Background())
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	next := func(ctx context.Context, want string) {
		t.Helper()
		sent := write(peer, []byte(want))
		if cancelled, err := w.peek(ctx, len(want)); cancelled || err != nil {
			t.Fatalf("peek for %q: cancelled %v, %v", want, cancelled, err)
		}
		buf := make([]byte, len(want))
		if _, err := io.ReadFull(s, buf); err != nil || string(buf) != want {
			t.Fatalf("read %q, %v; want %q", buf, err, want)
		}
		if err := <-sent; err != nil {
			t.Fatal(err)
		}
	}
	// registered returns the Done channel registered for and the registrations so far.
	registered := func() (<-chan struct{}, uint64) {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.done, w.gen
	}
	next(ctx1, "one")
	if done, _ := registered(); done != nil {
		t.Fatal("the first peek with a context kept its registration")
	}
	next(ctx1, "two")
	done, gen := registered()
	if done != ctx1.Done() {
		t.Fatal("the second peek in a row with a context did not keep its registration")
	}
	next(ctx1, "three")
	if d, g := registered(); d != done || g != gen {
		t.Fatal("a peek with the registered context registered again")
	}
	cancel1() // nobody peeks: the callback must leave the stream alone
	next(ctx2, "four")
	if d, _ := registered(); d != nil {
		t.Fatal("a peek with a context unlike the last one's kept its registration")
	}
	next(ctx2, "five")
	next(context.WithValue(ctx2, watchKey{}, 1), "six") // the same Done channel
	done, gen = registered()
	if done != ctx2.Done() {
		t.Fatal("the registration for ctx2 was not kept")
	}
	next(context.WithValue(ctx2, watchKey{}, 2), "seven")
	if _, g := registered(); g != gen {
		t.Fatal("a context with the registered Done channel registered again")
	}
	w.close()
	next(ctx2, "eight")
	if d, _ := registered(); d != nil {
		t.Fatal("a registration was made after close")
	}
}

// TestCancelWatchContextPerPeek: a loop that gives each peek its own context and ends
// it afterwards (the pattern that cannot keep a registration) loses and reorders
// nothing, also when a context ended before its peek.
func TestCancelWatchContextPerPeek(t *testing.T) {
	defer goleak.VerifyNone(t)
	w, s, peer := newWatchedPipe(t)
	defer w.close()
	const n = 200
	sent := make(chan error, 1)
	go func() {
		for i := range n {
			if _, err := peer.Write([]byte{byte(i)}); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	for i, try := 0, 0; i < n; try++ {
		ctx, cancel := context.WithCancel(context.Background())
		if try%3 == 0 {
			cancel() // ended before the peek
		}
		cancelled, err := w.peek(ctx, 1)
		cancel()
		if err != nil {
			t.Fatalf("byte %d: %v", i, err)
		}
		if cancelled {
			continue
		}
		b, err := s.ReadByte()
		if err != nil || b != byte(i) {
			t.Fatalf("byte %d arrived as %d (%v)", i, b, err)
		}
		i++
	}
	if err := <-sent; err != nil && !errors.Is(err, io.ErrClosedPipe) {
		t.Fatal(err)
	}
}
