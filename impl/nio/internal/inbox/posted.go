package inbox

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/ibisgo/ibis/internal/wake"
	"github.com/ibisgo/ibis/ipl"
)

// Posted reads. A reader that waits for a large read (a bulk array body going
// straight into the program's slice) while its inbox holds nothing posts its slice
// (Inbox.Read): the next bytes of the stream go into it, not into the inbox's chunks,
// and the reader is woken once it is full (or the connection ended, or the port
// closed), not for every push. Push copies what the event loop read into the posted
// slice first; a transport that may read the socket on the pushing goroutine does
// better with FillFrom, which reads the socket straight into the slice: one copy out
// of the kernel, as a blocking reader has, no inbox buffers, no budget held, and one
// wake-up for the whole slice. When no read is posted, FillFrom reads a busy socket
// into pooled buffers that become the inbox's chunks without a copy (fillBuf): bytes
// that come before the reader does are copied once on each side of the inbox, not
// twice on the way in.
//
// A read is posted only with nothing buffered, so the posted bytes are the stream's
// next ones and no byte overtakes another. The posted bytes pass the inbox's scan as
// pushed ones do, and count as progress for the stall watchdog: a sender that stalls
// halfway through a posted slice is cut as any other, and the cut (End) wakes the
// reader with what it got.
//
// The slice is the reader's, lent to the inbox while it waits. Every write into it is
// made under b.mu, and the reader takes the slice back under b.mu before Read
// returns, so the slice is never written once Read has returned. This is why
// FillFrom holds b.mu around the transport's read: that read must not wait (a
// non-blocking socket's read(2)), so the lock is held for a copy out of the kernel,
// never for the network.

const (
	// PostMin is the smallest read that is posted; a smaller one takes the bytes
	// through the inbox's chunks, where waking for each push costs
	// little against the read.
	PostMin = 64 << 10
	// fillMax bounds what FillFrom reads in one call, so that one connection
	// pouring a huge array does not keep its event loop from the others: the rest
	// stays readable and the loop comes back to it.
	fillMax = 1 << 20
	// fillBufSize is the size of the buffers FillFrom reads into when no read is
	// posted. A read of at least adoptMin bytes is kept as a chunk without a copy; a
	// smaller one is copied, as Push copies, and leaves the buffer's room for the
	// next. So every chunk cut from a buffer holds at least a quarter of it, and the
	// memory a port's unread bytes pin stays within four times its budget (see
	// InboxHighWater), however the socket's bytes come. A buffer with less than
	// adoptMin of room left is replaced (its start lives on as chunks).
	fillBufSize = 256 << 10
	adoptMin    = fillBufSize / 4
)

// postLocked posts p if the reader is about to wait for it: p is large, the inbox
// holds nothing and the connection has not ended; b.mu is held. Like any reader about
// to wait, it takes the connection out of a pause or park, or nothing would come: the
// returned function, when not nil, tells the transport to read again and is called
// without the lock.
func (b *Inbox) postLocked(p []byte) (posted bool, resume func()) {
	if len(p) < PostMin || b.n > 0 || b.ended || b.state == inboxRetired {
		return false, nil
	}
	b.post, b.postN = p, 0
	if b.flow != flowOn {
		resume = b.resumed()
	}
	return true, resume
}

// fillPosted copies the start of p into the posted slice; b.mu is held and b.post is
// set. It returns how many bytes it took and whether the slice is now full.
func (b *Inbox) fillPosted(p []byte) (n int, full bool) {
	n = copy(b.post[b.postN:], p)
	b.posted(n)
	return n, b.postN == len(b.post)
}

// posted accounts for n bytes just written into the posted slice; b.mu is held.
func (b *Inbox) posted(n int) {
	if n == 0 {
		return
	}
	b.scanPushed(b.post[b.postN : b.postN+n])
	b.postN += n
	b.c.Progress()
}

// FillFrom lets the transport read the connection into the inbox itself: straight
// into a posted slice when a reader waits with one, else (with more set: the
// transport's own read suggests more bytes wait) into buffers of the inbox's own,
// kept as chunks without a copy. read is called with the room to fill, again as long
// as it fills that room, until it brings less, about fillMax bytes have been read, or
// the inbox is full to its high water (the bytes left in the socket then come
// through the transport's next Push, which pauses the connection as usual). read must
// not wait for the network: it returns (0, nil) when nothing more can be read now, and
// an error (io.EOF at the end of the stream) when the connection cannot go on.
// FillFrom returns that error, wrapped; the transport then ends the connection as for
// an error of its own reads. full is Push's: stop reading until resumed. The
// transport calls it after Push, from one goroutine at a time.
func (b *Inbox) FillFrom(read func(p []byte) (int, error), more bool) (full bool, err error) {
	// buf[used:] is where the socket is read when no read is posted; the inbox holds
	// nothing of it when FillFrom returns, only chunks cut from its start.
	var buf *fillBuf
	var used int
	defer func() {
		if buf != nil {
			b.unpin(buf)
			buf.release()
		}
	}()
	for got := 0; got < fillMax; {
		b.mu.Lock()
		if b.ended || b.state == inboxRetired {
			b.mu.Unlock()
			return false, nil
		}
		if b.post != nil && b.postN < len(b.post) {
			want := min(len(b.post)-b.postN, fillMax-got)
			n, err := b.readPosted(read, want)
			b.mu.Unlock()
			got += n
			if err != nil || n < want {
				return false, err // a short read emptied the socket
			}
			more = true // the socket had bytes: there may be more
			continue
		}
		if !more || b.n >= InboxHighWater || b.q.buffered.Load() >= PortHighWater {
			b.mu.Unlock()
			return false, nil
		}
		b.mu.Unlock()
		// Into a buffer nobody else sees until push adopts what was read.
		if buf == nil || len(buf.b)-used < adoptMin {
			buf.release()
			buf, used = newFillBuf(), 0
		}
		dst := buf.b[used:]
		dst = dst[:min(len(dst), fillMax-got)]
		n, err := read(dst)
		switch {
		case n < 0 || n > len(dst):
			return false, fmt.Errorf("reading the connection: %d bytes from a read of %d", n, len(dst))
		case n >= adoptMin:
			full = b.push(dst[:n:n], buf)
			used += n
		case n > 0:
			full = b.push(dst[:n], nil)
		}
		got += n
		if err != nil {
			return full, fmt.Errorf("reading the connection: %w", err)
		}
		if n < len(dst) || full {
			// A short read emptied the socket: bytes that come later make the
			// transport's poller call again.
			return full, nil
		}
	}
	return false, nil
}

// unpin gives a fill buffer back at once when the inbox will hold its chunks for a
// while: paused or parked (its port is behind), or holding only the unfinished start
// of a message. Its chunks of buf become copies of their own, so that a connection
// that waits pins the bytes it holds, not a fillBufSize buffer per connection. An
// inbox whose message is being read, or that waits its turn with its flow on, keeps
// the chunks as they are: they are read soon.
func (b *Inbox) unpin(buf *fillBuf) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == inboxOwned || (b.flow == flowOn && b.starts > 0) {
		return
	}
	for i := range b.chunks {
		c := &b.chunks[i]
		if c.buf != buf {
			continue
		}
		from := c.b
		if i == 0 {
			from, b.off = from[b.off:], 0
		}
		own := make([]byte, len(from))
		copy(own, from)
		c.buf.release()
		*c = chunk{b: own}
	}
}

// readPosted reads into the posted slice, at most max bytes; b.mu is held, and held
// around read (see the top of the file). The reader is woken once the slice is full.
func (b *Inbox) readPosted(read func(p []byte) (int, error), max int) (int, error) {
	dst := b.post[b.postN:]
	dst = dst[:min(len(dst), max)]
	n, err := read(dst)
	if n < 0 || n > len(dst) {
		return 0, fmt.Errorf("reading into a posted read: %d bytes from a read of %d", n, len(dst))
	}
	b.posted(n)
	if b.postN == len(b.post) {
		wake.Poke(b.wake)
	}
	if err != nil {
		return n, fmt.Errorf("reading into a posted read: %w", err)
	}
	return n, nil
}

// awaitPosted waits until the posted slice is full, the connection ended, or the port
// closed, then takes the slice back. It returns how many bytes were written into it;
// 0 with no error when the connection ended before any came (Read then reports the end).
func (b *Inbox) awaitPosted() (int, error) {
	for {
		var closed bool
		select {
		case <-b.wake:
		case <-b.c.Closed():
			closed = true
		}
		b.mu.Lock()
		if !closed && !b.ended && b.postN < len(b.post) {
			b.mu.Unlock()
			continue
		}
		n := b.postN
		b.post, b.postN = nil, 0
		b.mu.Unlock()
		if closed {
			return n, fmt.Errorf("receive port %s: %w", b.c.Port(), ipl.ErrClosed)
		}
		return n, nil
	}
}

// fillBuf is a buffer FillFrom reads the socket into when no read is posted. What it
// read becomes the inbox's chunks without a copy, each holding a reference, and
// FillFrom holds one while it reads; the last release puts it back in fillPool. So an
// idle inbox holds none, and a busy one reuses buffers instead of allocating and
// clearing one per read.
type fillBuf struct {
	b    []byte
	refs atomic.Int32
}

var fillPool = sync.Pool{New: func() any { return &fillBuf{b: make([]byte, fillBufSize)} }}

// newFillBuf takes a buffer from the pool, with FillFrom's reference.
func newFillBuf() *fillBuf {
	f := fillPool.Get().(*fillBuf)
	f.refs.Store(1)
	return f
}

// release drops a reference; nil (a chunk of the inbox's own) has none.
func (f *fillBuf) release() {
	if f == nil {
		return
	}
	switch r := f.refs.Add(-1); {
	case r == 0:
		fillPool.Put(f)
	case r < 0:
		panic("inbox: fill buffer released more often than taken")
	}
}
