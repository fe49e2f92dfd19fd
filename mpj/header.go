package mpj

import (
	"errors"
	"fmt"

	"github.com/ibisgo/ibis/ipl"
)

// Message kinds on the wire.
const (
	kindData uint8 = 1 // a message for a receive
	kindAck  uint8 = 2 // a receiver matched an Ssend: the sender may return
)

// maxCount bounds the element count a header may announce, so that a corrupt header
// cannot make the receiver allocate without bound (2^40 elements is beyond any
// message an Ibis accepts by default).
const maxCount = 1 << 40

// header is the envelope that precedes every message's payload. ctx separates
// communicators (and, within one, point-to-point from collective traffic); src and
// tag are what receives match on; dtype and count say what the payload holds, so the
// receiver can check the buffer before reading; syncID is non-zero for an Ssend, whose
// sender waits for an ack naming it; from is the sender's slot (its index in the
// join order), to which the ack goes.
type header struct {
	kind   uint8
	dtype  Datatype
	ctx    uint32
	src    int32
	tag    int32
	from   int32
	count  int64
	syncID int64
	// elem is the element type of a message of objects (dtype Object), which must be the
	// receive buffer's.
	elem string
}

// write puts h at the start of a message.
func (h *header) write(m ipl.WriteMessage) error {
	err := errors.Join(m.WriteByte(h.kind), m.WriteByte(byte(h.dtype)), m.WriteUint32(h.ctx),
		m.WriteInt32(h.src), m.WriteInt32(h.tag), m.WriteInt32(h.from), m.WriteInt64(h.count),
		m.WriteInt64(h.syncID))
	if err != nil || h.dtype != Object {
		return err
	}
	return errors.Join(m.WriteUint16(uint16(len(h.elem))), m.WriteArray([]byte(h.elem)))
}

// read takes a header from the start of a message and checks what it can.
func (h *header) read(m ipl.ReadMessage) error {
	var err error
	var k, d byte
	if k, err = m.ReadByte(); err != nil {
		return err
	}
	if d, err = m.ReadByte(); err != nil {
		return err
	}
	h.kind, h.dtype = k, Datatype(d)
	if h.ctx, err = m.ReadUint32(); err != nil {
		return err
	}
	if h.src, err = m.ReadInt32(); err != nil {
		return err
	}
	if h.tag, err = m.ReadInt32(); err != nil {
		return err
	}
	if h.from, err = m.ReadInt32(); err != nil {
		return err
	}
	if h.count, err = m.ReadInt64(); err != nil {
		return err
	}
	if h.syncID, err = m.ReadInt64(); err != nil {
		return err
	}
	if h.kind == kindData && h.dtype == Object {
		n, err := m.ReadUint16()
		if err != nil {
			return err
		}
		if n > maxElemName {
			return fmt.Errorf("%w: mpj: message of objects with a type name of %d bytes", ipl.ErrTypeMismatch, n)
		}
		name := make([]byte, n)
		if err := m.ReadArray(name); err != nil {
			return err
		}
		h.elem = string(name)
	}
	switch {
	case h.kind != kindData && h.kind != kindAck:
		return fmt.Errorf("%w: mpj: message of unknown kind %d", ipl.ErrTypeMismatch, h.kind)
	case h.kind == kindData && (h.dtype == 0 || h.dtype >= numDatatypes):
		return fmt.Errorf("%w: mpj: message of unknown element type %d", ipl.ErrTypeMismatch, h.dtype)
	case h.count < 0 || h.count > maxCount:
		return fmt.Errorf("%w: mpj: message announces %d elements", ipl.ErrTypeMismatch, h.count)
	}
	return nil
}

// status is what a receive of the message reports.
func (h *header) status() Status {
	return Status{Source: int(h.src), Tag: int(h.tag), Count: int(h.count), Datatype: h.dtype, Elem: h.elem}
}
