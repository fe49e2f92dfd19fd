package serialization

import (
	"encoding/binary"
	"fmt"
)

// packetHeader is what a packet header announces, once framing.next has found it a
// valid next header of its stream.
type packetHeader struct {
	counts  [numSections]int64 // elements of each section
	body    int64              // body bytes without the padding
	padded  int64              // body bytes on the wire: body rounded up to 8
	flags   byte
	bulkSec int // the one section of a bulk packet
}

// framing is the message structure of a stream as its packet headers tell it: whether
// the next packet continues a message and how large the message has grown. It is the
// one place that decides what a valid next header is; the Reader (parse) and the
// Scanner both take every header through next, so that a stream a Scanner lets pass
// is one the Reader accepts at its headers, with the same errors.
type framing struct {
	maxMessage int64 // the message size limit, headers and padding included
	maxPacket  int64 // the largest small-packet body

	mid      bool  // the last packet did not end its message: the next one continues it
	msgBytes int64 // wire bytes of the current message announced so far
}

// next checks the header h as the stream's next packet header and, when it is valid,
// takes it in and describes it in p. It returns an error wrapping ErrCorrupt for bytes
// that are not a packet header or break a limit, ErrClosedByPeer itself for the
// sender's close packet between messages, and one wrapping ErrClosedByPeer for a close
// packet inside a message. On an error the framing is unchanged.
func (f *framing) next(h *[HeaderSize]byte, p *packetHeader) error {
	if h[0] != Magic {
		return corruptf("bad magic byte 0x%02x at the start of a packet (want 0x%02x)", h[0], Magic)
	}
	if h[1] > orderBig {
		return corruptf("unknown byte order %d in packet header", h[1])
	}
	flags := h[2]
	if flags&^knownFlags != 0 {
		return corruptf("unknown flags 0x%02x in packet header", flags)
	}
	if h[3] != 0 || binary.LittleEndian.Uint32(h[4:8]) != 0 {
		return corruptf("reserved header bytes are not zero: % x", h[3:8])
	}
	// The concrete orders, not orderOf's interface: six dynamic calls per packet
	// showed in the Reader's time per message.
	big := h[1] == orderBig
	var body int64
	nonZero, bulkSec := 0, 0
	for i := range numSections {
		var c int64
		if b := h[countsOffset+4*i:]; big {
			c = int64(binary.BigEndian.Uint32(b))
		} else {
			c = int64(binary.LittleEndian.Uint32(b))
		}
		p.counts[i] = c
		body += c * int64(secSize[i])
		if c != 0 {
			nonZero++
			bulkSec = i
		}
	}
	if flags&FlagClose != 0 {
		if flags != FlagClose || body != 0 {
			return corruptf("malformed close packet: flags 0x%02x, %d body bytes", flags, body)
		}
		if !f.mid {
			return ErrClosedByPeer
		}
		return fmt.Errorf("%w in the middle of a message, after %d bytes", ErrClosedByPeer, f.msgBytes)
	}
	padded := pad8(body)
	total := HeaderSize + padded
	if f.mid {
		total += f.msgBytes
	}
	if total > f.maxMessage {
		return fmt.Errorf("%w: %w: a packet takes the message to %d bytes, over the limit of %d bytes",
			ErrCorrupt, ErrTooLarge, total, f.maxMessage)
	}
	bulk := flags&FlagBulk != 0
	if !bulk && padded > f.maxPacket {
		return fmt.Errorf("%w: %w: packet body of %d bytes exceeds the maximum packet size of %d bytes",
			ErrCorrupt, ErrTooLarge, padded, f.maxPacket)
	}
	if bulk && nonZero != 1 {
		return corruptf("a bulk packet must hold values of exactly one type, this one announces %d types", nonZero)
	}
	f.msgBytes, f.mid = total, flags&FlagEnd == 0
	p.body, p.padded, p.flags, p.bulkSec = body, padded, flags, bulkSec
	return nil
}

// framing returns the framing of a stream read under c's limits (c normalized).
func (c *readerConfig) framing() framing {
	return framing{maxMessage: c.maxMessage, maxPacket: int64(c.maxPacket)}
}
