package registry

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/ibisgo/ibis/internal/hub"
)

const (
	// DefaultMaxFrameSize is the largest frame body (in bytes) accepted
	// unless WithMaxFrameSize says otherwise: 1 MiB.
	DefaultMaxFrameSize = 1 << 20

	// MinMaxFrameSize is the smallest maximum frame size a server accepts;
	// smaller settings are raised to it so that joins always fit.
	MinMaxFrameSize = 4 << 10

	// frameHeaderSize is the length prefix: a big-endian uint32.
	frameHeaderSize = 4

	// frameChunk bounds how much memory a frame pins before its bytes have
	// actually arrived: the body buffer grows in steps of this size.
	frameChunk = 64 << 10
)

// readFrame reads one frame (length prefix and body) from r and returns its
// body. The length is checked against max before any memory is set aside,
// and the body buffer grows only as bytes arrive, so a peer that announces a
// large frame and stalls pins at most one chunk. buf is reused when it is
// large enough; the returned slice aliases it.
//
// A clean end of stream before a frame starts is reported as io.EOF. A bad
// length or a stream that ends inside a frame gives an error wrapping
// ErrProtocol. Other read errors (timeouts, resets) are wrapped as they are.
// A length over max whose bytes read as the start of a hub protocol frame
// says so (see hubHint).
func readFrame(r io.Reader, buf []byte, max int) ([]byte, error) {
	var hdr [frameHeaderSize]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		switch {
		case errors.Is(err, io.EOF):
			return nil, io.EOF
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, fmt.Errorf("%w: stream ended inside a frame header", ErrProtocol)
		default:
			return nil, fmt.Errorf("read frame header: %w", err)
		}
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n == 0 {
		return nil, fmt.Errorf("%w: empty frame (length 0)", ErrProtocol)
	}
	if uint64(n) > uint64(max) {
		return nil, fmt.Errorf("%w: frame of %d bytes exceeds the maximum of %d bytes%s", ErrProtocol, n, max, hubHint(hdr))
	}
	size := int(n)
	buf = buf[:0]
	for len(buf) < size {
		step := min(size-len(buf), frameChunk)
		buf = slices.Grow(buf, step)
		got, err := io.ReadFull(r, buf[len(buf):len(buf)+step])
		buf = buf[:len(buf)+got]
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, fmt.Errorf("%w: truncated frame: got %d of %d bytes", ErrProtocol, len(buf), size)
			}
			return nil, fmt.Errorf("read frame body (%d of %d bytes): %w", len(buf), size, err)
		}
	}
	return buf, nil
}

// hubHint explains a frame header that is too long for a registry frame when
// its bytes begin a frame of the hub protocol (cmd/ibis-hub, internal/hub),
// which starts its connections with the same pool check as the registry: a
// member whose IBIS_HUB names a registry sends the server such a frame (a
// hub registration), and a registry address that reaches a hub gets one
// back. The peer is then almost surely no registry peer, though a real
// frame of 16 MiB or more can begin with such bytes too, hence "probably".
func hubHint(hdr [frameHeaderSize]byte) string {
	if !hub.LooksLikeFrame(hdr[:]) {
		return ""
	}
	return fmt.Sprintf(" (its length prefix, % x, reads as the start of a hub protocol frame: the peer is probably an ibis-hub, "+
		"or a process whose IBIS_HUB names this address)", hdr[:])
}

// putFrameHeader writes the length prefix for a frame whose body follows the
// first frameHeaderSize bytes of frame.
func putFrameHeader(frame []byte) {
	binary.BigEndian.PutUint32(frame[:frameHeaderSize], uint32(len(frame)-frameHeaderSize))
}
