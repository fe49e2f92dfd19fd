package rawnet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
)

// NoReply in a frame's reply field asks the server not to answer.
const NoReply = ^uint32(0)

// MaxFrame bounds a frame's payload and reply, so that a server never allocates
// more than this for a header it read.
const MaxFrame = 64 << 20

// HeaderSize is the size of a frame header.
const HeaderSize = 8

// ErrFrame: a frame header claims more than MaxFrame bytes.
var ErrFrame = errors.New("rawnet: frame too large")

// header encodes a frame header.
func header(h *[HeaderSize]byte, n int, reply uint32) {
	binary.LittleEndian.PutUint32(h[0:], uint32(n))
	binary.LittleEndian.PutUint32(h[4:], reply)
}

// parseHeader decodes and checks a frame header.
func parseHeader(h []byte) (n int, reply uint32, err error) {
	ln := binary.LittleEndian.Uint32(h[0:])
	reply = binary.LittleEndian.Uint32(h[4:])
	if ln > MaxFrame || (reply != NoReply && reply > MaxFrame) {
		return 0, 0, fmt.Errorf("%w: payload %d, reply %d, limit %d", ErrFrame, ln, reply, MaxFrame)
	}
	return int(ln), reply, nil
}

// Conn is the client end of a raw connection.
type Conn struct {
	c    net.Conn
	hdr  [HeaderSize]byte
	rhdr [HeaderSize]byte
	in   []byte
	bufs net.Buffers
}

// Dial connects to a raw server with TCP_NODELAY set.
func Dial(addr string) (*Conn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("rawnet: dialing %s: %w", addr, err)
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	return &Conn{c: c}, nil
}

// Send writes one frame asking for a reply of reply bytes (NoReply for none) in one
// vectored write, as Ibis sends a message.
func (c *Conn) Send(payload []byte, reply uint32) error {
	header(&c.hdr, len(payload), reply)
	c.bufs = append(c.bufs[:0], c.hdr[:], payload)
	if _, err := c.bufs.WriteTo(c.c); err != nil {
		return fmt.Errorf("rawnet: send: %w", err)
	}
	return nil
}

// Receive reads one frame from the server and returns its payload (valid until the
// next call).
func (c *Conn) Receive() ([]byte, error) {
	if _, err := io.ReadFull(c.c, c.rhdr[:]); err != nil {
		return nil, fmt.Errorf("rawnet: receive: %w", err)
	}
	n, _, err := parseHeader(c.rhdr[:])
	if err != nil {
		return nil, err
	}
	if cap(c.in) < n {
		c.in = make([]byte, n)
	}
	if _, err := io.ReadFull(c.c, c.in[:n]); err != nil {
		return nil, fmt.Errorf("rawnet: receive: %w", err)
	}
	return c.in[:n], nil
}

// RoundTrip sends payload and waits for a reply of reply bytes.
func (c *Conn) RoundTrip(payload []byte, reply int) ([]byte, error) {
	if err := c.Send(payload, uint32(reply)); err != nil {
		return nil, err
	}
	return c.Receive()
}

// Close closes the connection; the server's handler for it ends.
func (c *Conn) Close() error { return c.c.Close() }
