package inbox

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// socketSim is a non-blocking socket for FillFrom: it hands out src in reads of
// random size, and says "nothing now" (0, nil) at random, as a socket the sender
// has not filled yet does; at the end of src it reports end (nil: stay open).
type socketSim struct {
	src   []byte
	rng   *rand.Rand
	max   int   // largest read
	end   error // returned once src is exhausted; nil: "nothing now" for ever
	reads int
}

func (s *socketSim) read(p []byte) (int, error) {
	s.reads++
	if len(s.src) == 0 {
		return 0, s.end
	}
	if s.rng.IntN(4) == 0 {
		return 0, nil
	}
	n := min(len(p), len(s.src), 1+s.rng.IntN(s.max))
	copy(p, s.src[:n])
	s.src = s.src[n:]
	return n, nil
}

// ownedInbox is a bare inbox whose message a reader owns, as once Receive took it.
func ownedInbox() *Inbox {
	b := bareInbox()
	b.state = inboxOwned
	return b
}

// readAsync reads len(dst) bytes from b on a goroutine of its own, as ReadArray does.
func readAsync(b *Inbox, dst []byte) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := io.ReadFull(b, dst)
		done <- err
	}()
	return done
}

// waitPosted waits until the reader has posted its slice.
func waitPosted(t *testing.T, b *Inbox) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b.mu.Lock()
		posted := b.post != nil
		b.mu.Unlock()
		if posted {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the reader did not post its slice")
		}
		time.Sleep(time.Millisecond)
	}
}

func randomBytes(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(rng.Uint32())
	}
	return p
}

// TestPostedReadTakesNoBuffer: a reader waiting for a large read on an empty inbox
// gets the stream's bytes straight into its slice, from Push and from FillFrom's
// reads of the socket, in order, across many reads and several FillFrom calls (the
// slice is larger than FillFrom reads at once), while the inbox buffers nothing and
// holds nothing of its port's budget.
func TestPostedReadTakesNoBuffer(t *testing.T) {
	b := ownedInbox()
	src := randomBytes(1, 3<<20+7)
	dst := make([]byte, len(src))
	done := readAsync(b, dst)
	waitPosted(t, b)
	b.Push(src[:1000]) // what the event loop's own read brought
	sock := &socketSim{src: src[1000:], rng: rand.New(rand.NewPCG(2, 2)), max: 200 << 10}
	for len(sock.src) > 0 {
		if full, err := b.FillFrom(sock.read, false); full || err != nil {
			t.Fatalf("FillFrom: full %v, %v", full, err)
		}
		b.mu.Lock()
		n := b.n
		b.mu.Unlock()
		if n != 0 || b.q.buffered.Load() != 0 {
			t.Fatalf("the inbox buffers %d bytes (port: %d) while a read is posted", n, b.q.buffered.Load())
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dst, src) {
		t.Fatal("the posted read got other bytes than were sent")
	}
}

// TestFillFromKeepsItsBuffers: with no read posted, FillFrom reads a busy socket into
// pooled buffers that the inbox keeps as chunks (large reads) or copies (small ones);
// a reader that comes later, taking small pieces, gets every byte in order, after
// bytes pushed before and between, and every buffer is released once read.
func TestFillFromKeepsItsBuffers(t *testing.T) {
	b := ownedInbox()
	src := randomBytes(3, 900<<10+3)
	b.Push(src[:5000])
	sock := &socketSim{src: src[5000 : 600<<10], rng: rand.New(rand.NewPCG(4, 4)), max: 128 << 10}
	for len(sock.src) > 0 {
		if _, err := b.FillFrom(sock.read, true); err != nil {
			t.Fatal(err)
		}
	}
	b.Push(src[600<<10 : 610<<10])
	sock.src = src[610<<10:]
	for len(sock.src) > 0 {
		if _, err := b.FillFrom(sock.read, true); err != nil {
			t.Fatal(err)
		}
	}
	b.mu.Lock()
	var bufs []*fillBuf
	for _, c := range b.chunks {
		if c.buf != nil {
			if len(c.b) < adoptMin {
				t.Errorf("a chunk of %d bytes keeps a buffer of %d", len(c.b), fillBufSize)
			}
			bufs = append(bufs, c.buf)
		}
	}
	b.mu.Unlock()
	if len(bufs) == 0 {
		t.Fatal("FillFrom copied every read: no buffer was kept")
	}
	got := make([]byte, 0, len(src))
	p := make([]byte, 10<<10) // below PostMin: never posted
	for len(got) < len(src) {
		n, err := b.Read(p)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p[:n]...)
	}
	if !bytes.Equal(got, src) {
		t.Fatal("the bytes came out of the inbox in another order or changed")
	}
	for _, f := range bufs {
		if r := f.refs.Load(); r != 0 {
			t.Fatalf("a fill buffer still has %d references after all was read", r)
		}
	}
	if b.q.buffered.Load() != 0 {
		t.Fatalf("the port still counts %d buffered bytes", b.q.buffered.Load())
	}
}

// TestFillFromStopsAtHighWater: FillFrom leaves what is beyond the inbox's high water
// in the socket, for the transport's next Push to pause the connection.
func TestFillFromStopsAtHighWater(t *testing.T) {
	b := ownedInbox()
	sock := &socketSim{src: make([]byte, 4*InboxHighWater), rng: rand.New(rand.NewPCG(5, 5)), max: 256 << 10}
	for range 100 {
		if _, err := b.FillFrom(sock.read, true); err != nil {
			t.Fatal(err)
		}
	}
	b.mu.Lock()
	n := b.n
	b.mu.Unlock()
	if n < InboxHighWater || n >= InboxHighWater+fillBufSize {
		t.Fatalf("the inbox holds %d bytes: want its high water %d, give or take a read", n, InboxHighWater)
	}
	b.discard()
}

// TestPostedReadEnds: the connection ends halfway through a posted read (the socket's
// end, as a killed sender's): FillFrom reports the end, the transport ends the inbox,
// and the reader gets the bytes that came, then the end, instead of waiting.
func TestPostedReadEnds(t *testing.T) {
	b := ownedInbox()
	src := randomBytes(6, 2<<20)
	dst := make([]byte, len(src))
	done := make(chan error, 1)
	var got int
	go func() {
		n, err := io.ReadFull(b, dst)
		got = n
		done <- err
	}()
	waitPosted(t, b)
	sock := &socketSim{src: src[:1<<20+5], rng: rand.New(rand.NewPCG(7, 7)), max: 100 << 10, end: io.EOF}
	var err error
	for err == nil {
		_, err = b.FillFrom(sock.read, false)
	}
	if !errors.Is(err, io.EOF) {
		t.Fatalf("FillFrom at the socket's end: %v, want io.EOF", err)
	}
	b.End(nil)
	select {
	case err := <-done:
		if !errors.Is(err, io.ErrUnexpectedEOF) || got != 1<<20+5 {
			t.Fatalf("read %d bytes, %v; want %d, io.ErrUnexpectedEOF", got, err, 1<<20+5)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reader still waits after the connection ended")
	}
	if !bytes.Equal(dst[:got], src[:got]) {
		t.Fatal("the bytes before the end changed")
	}
}

// TestPostedReadPortClosed: the port closes while a read is posted: the reader
// returns ErrClosed, and the slice is the program's again: nothing the socket brings
// afterwards is written into it.
func TestPostedReadPortClosed(t *testing.T) {
	b := ownedInbox()
	dst := make([]byte, 1<<20)
	done := readAsync(b, dst)
	waitPosted(t, b)
	b.Push([]byte{1, 2, 3})
	close(b.c.(*fakeConn).closed)
	select {
	case err := <-done:
		if !errors.Is(err, ipl.ErrClosed) {
			t.Fatalf("read on a closed port: %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reader still waits after its port closed")
	}
	clear(dst)
	sock := &socketSim{src: bytes.Repeat([]byte{9}, 300<<10), rng: rand.New(rand.NewPCG(8, 8)), max: 64 << 10}
	for range 20 {
		if _, err := b.FillFrom(sock.read, true); err != nil {
			t.Fatal(err)
		}
	}
	if i := bytes.IndexByte(dst, 9); i >= 0 {
		t.Fatalf("byte %d of the slice was written after its read returned", i)
	}
	b.discard()
}

// TestFillFromStopsAfterAShortRead: a read that brings less than the room it was given
// emptied the socket, so FillFrom asks it no more (the read that would only say
// "nothing now" is a system call per message), with a read posted or not.
func TestFillFromStopsAfterAShortRead(t *testing.T) {
	src := randomBytes(5, 200<<10)
	reads := 0
	short := func(p []byte) (int, error) { // a socket that always holds 100 bytes more
		reads++
		n := copy(p[:min(len(p), 100)], src)
		src = src[n:]
		return n, nil
	}
	b := ownedInbox()
	if _, err := b.FillFrom(short, true); err != nil {
		t.Fatal(err)
	}
	if reads != 1 || b.n != 100 {
		t.Fatalf("FillFrom without a posted read: %d reads, %d bytes held; want 1 read of 100 bytes", reads, b.n)
	}
	b = ownedInbox()
	want := src[:PostMin]
	dst := make([]byte, PostMin)
	done := readAsync(b, dst)
	waitPosted(t, b)
	reads = 0
	if _, err := b.FillFrom(short, true); err != nil {
		t.Fatal(err)
	}
	if reads != 1 {
		t.Fatalf("FillFrom into a posted read: %d reads after a short one, want 1", reads)
	}
	for range PostMin / 100 { // the rest, a short read at a time
		if _, err := b.FillFrom(short, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dst, want) {
		t.Fatal("the posted read got other bytes than the socket gave")
	}
}

// TestReadChunksAreReused: the small buffers that hold pushed bytes go back to their
// pool once read and serve the next pushes; a buffer still holding unread bytes is
// never handed out, so every byte comes out as it went in, in order.
func TestReadChunksAreReused(t *testing.T) {
	b := ownedInbox()
	src := randomBytes(6, 64<<10)
	var got []byte
	p := make([]byte, 3000)
	for off := 0; off < len(src); {
		n := min(len(src)-off, 700+off%1900) // pushes that straddle chunks and reads
		b.Push(src[off : off+n])
		off += n
		k, err := b.Read(p[:min(len(p), 1+off%2999)])
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p[:k]...)
	}
	for len(got) < len(src) {
		k, err := b.Read(p)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p[:k]...)
	}
	if !bytes.Equal(got, src) {
		t.Fatal("the bytes came out of the inbox in another order or changed")
	}
	if b.n != 0 || b.chunks != nil || b.q.buffered.Load() != 0 {
		t.Fatalf("the inbox still holds %d bytes in %d chunks (port: %d)", b.n, len(b.chunks), b.q.buffered.Load())
	}
}
