package core

import (
	"bytes"
	"crypto/rand"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/tlsconf"
)

// countingConn counts the writes that reach the socket.
type countingConn struct {
	net.Conn
	writes atomic.Int64
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// A large Write of a TLS connection goes out in a few system calls, not one per 16 KiB
// record, and arrives whole and in order; small writes and the handshake still pass.
func TestTLSBatchesRecords(t *testing.T) {
	files, err := tlsconf.Generate(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	scfg, err := files.Server()
	if err != nil {
		t.Fatal(err)
	}
	ccfg, err := files.Client()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	const size = 3 << 20
	data := make([]byte, size)
	_, _ = rand.Read(data)
	got := make(chan []byte, 1)
	go func() {
		raw, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer raw.Close()
		s := newTLSConn(raw, scfg, true)
		b, _ := io.ReadAll(io.LimitReader(s, size+5))
		got <- b
	}()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	cc := &countingConn{Conn: raw}
	c := newTLSConn(cc, ccfg, false)
	if err := c.Handshake(); err != nil {
		t.Fatal(err)
	}
	before := cc.writes.Load()
	if _, err := c.Write(data[:5]); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(data[5:]); err != nil {
		t.Fatal(err)
	}
	writes := cc.writes.Load() - before
	_ = c.Close()
	if b := <-got; !bytes.Equal(b, data) {
		t.Fatalf("received %d bytes, not the %d sent", len(b), size)
	}
	// 3 MiB is 192 records; in batches of batchMax it is 12 writes, plus the small one.
	if limit := int64(size/batchMax + 3); writes > limit {
		t.Errorf("%d writes reached the socket for %d bytes, want at most %d", writes, size, limit)
	}
}
