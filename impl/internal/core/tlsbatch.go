package core

import (
	"crypto/tls"
	"net"
	"sync"
)

// batchMax bounds what a batch of TLS records holds before it is written: large enough
// that a 1 MiB message takes four system calls instead of 64 (one per 16 KiB record),
// small enough that the kernel sends one batch while the next is encrypted. Only the
// writing side batches. docs/SECURITY.md has the figures.
const batchMax = 256 << 10

// batchConn is the socket under a TLS connection. Go's crypto/tls writes every record
// (at most 16 KiB) with a system call of its own, which is more than half of what TLS
// costs a large message (docs/SECURITY.md); while a batch is open, batchConn collects the
// records and writes them together. Outside a batch (the handshake, alerts, what the
// reading side answers) it writes through.
//
// Lock order: a tlsConn's wmu before its batchConn's mu, taken directly (begin, end)
// and through crypto/tls, whose record writes come to Write with its own write lock
// held. mu is a leaf: under it only the raw socket is written.
type batchConn struct {
	net.Conn
	mu       sync.Mutex
	batching bool
	buf      *[]byte // from batchBufs while a batch holds records
}

// batchBufs lends batches their buffers, so that an idle TLS connection holds none.
var batchBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, batchMax)
	return &b
}}

// Write takes a record: into the batch when one is open, else to the socket.
func (b *batchConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.batching {
		return b.Conn.Write(p)
	}
	if b.buf != nil && len(*b.buf)+len(p) > batchMax {
		if err := b.flushLocked(); err != nil {
			return 0, err
		}
	}
	if len(p) >= batchMax {
		return b.Conn.Write(p)
	}
	if b.buf == nil {
		b.buf = batchBufs.Get().(*[]byte)
	}
	*b.buf = append(*b.buf, p...)
	return len(p), nil
}

func (b *batchConn) flushLocked() error {
	if b.buf == nil || len(*b.buf) == 0 {
		return nil
	}
	_, err := b.Conn.Write(*b.buf)
	*b.buf = (*b.buf)[:0]
	return err
}

func (b *batchConn) begin() {
	b.mu.Lock()
	b.batching = true
	b.mu.Unlock()
}

// end closes the batch and writes what it holds.
func (b *batchConn) end() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.batching = false
	err := b.flushLocked()
	if b.buf != nil {
		batchBufs.Put(b.buf)
		b.buf = nil
	}
	return err
}

// tlsConn is a TLS connection whose every Write goes out as one batch of records.
type tlsConn struct {
	*tls.Conn
	b   *batchConn
	wmu sync.Mutex // one Write (one batch) at a time; taken before b's mu
}

// Write encrypts p and sends its records in as few system calls as batchMax allows.
func (c *tlsConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.b.begin()
	n, err := c.Conn.Write(p)
	if ferr := c.b.end(); err == nil {
		err = ferr
	}
	return n, err
}

// newTLSConn wraps conn for TLS in the given role; the handshake is the caller's.
func newTLSConn(conn net.Conn, cfg *tls.Config, server bool) *tlsConn {
	b := &batchConn{Conn: conn}
	if server {
		return &tlsConn{Conn: tls.Server(b, cfg), b: b}
	}
	return &tlsConn{Conn: tls.Client(b, cfg), b: b}
}
