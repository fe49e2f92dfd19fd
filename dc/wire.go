package dc

import (
	"errors"
	"fmt"

	"github.com/ibisgo/ibis/ipl"
)

// The messages between workers. Each starts with its type byte; arguments and results
// travel as Ibis objects after the fixed fields.
const (
	// msgSteal asks for a job: request id, the thief's identifier, flags, hops so far.
	msgSteal byte = 1 + iota
	// msgReply answers a steal: request id, the giver's identifier, and whether a job
	// follows (its kind's name, the owner's stamp for it and its argument).
	msgReply
	// msgResult returns a stolen job's outcome to its owner: the stamp, a failure ("" when
	// it succeeded) and, on success, the result.
	msgResult
	// msgDone ends the run: a failure and flags, or the root job's result.
	msgDone
	// msgStats answers msgDone with the sender's statistics.
	msgStats
	// msgProbe carries nothing: a process whose registry is lost for good sends it to
	// find out whether the others still take its messages (see Runtime.probe).
	msgProbe
)

// Flags of a steal request.
const (
	// flagAsync marks a wide-area steal of CRS: the thief does not wait for the answer.
	flagAsync byte = 1 << iota
)

// Flags of the end of a run (msgDone).
const (
	// flagStopped marks a run the root stopped (its context ended, or it closed) rather
	// than one a job failed.
	flagStopped byte = 1 << iota
)

// Bounds on what a peer's message may hold.
const (
	maxKindName = 128
	maxIDField  = 1024
	maxFailure  = 4096
)

// ErrMalformed is what a message that breaks the protocol fails with.
var ErrMalformed = errors.New("dc: malformed message")

// writer is the part of ipl.WriteMessage the messages are written with.
type writer interface {
	WriteByte(v byte) error
	WriteInt32(v int32) error
	WriteInt64(v int64) error
	WriteString(v string) error
	WriteObject(v any) error
}

// reader is the part of ipl.ReadMessage the messages are read with.
type reader interface {
	ReadByte() (byte, error)
	ReadInt32() (int32, error)
	ReadInt64() (int64, error)
	ReadString() (string, error)
	ReadObject(ptr any) error
}

// header is the fixed part of a message; what follows it (an argument, a result) is
// read by the one who knows its type.
type header struct {
	typ   byte
	req   int64              // msgSteal, msgReply
	peer  ipl.IbisIdentifier // the thief (msgSteal), the giver (msgReply)
	flags byte               // msgSteal, msgDone
	hops  int32              // msgSteal
	job   bool               // msgReply: a job follows
	kind  string             // msgReply with a job
	stamp int64              // msgReply with a job, msgResult
	fail  string             // msgResult, msgDone
}

func writeIdentifier(m writer, id ipl.IbisIdentifier) error {
	for _, s := range []string{id.Pool, id.ID, id.Address, id.Tag} {
		if err := m.WriteString(s); err != nil {
			return err
		}
	}
	return nil
}

func readIdentifier(m reader) (ipl.IbisIdentifier, error) {
	var f [4]string
	for i := range f {
		s, err := m.ReadString()
		if err != nil {
			return ipl.IbisIdentifier{}, err
		}
		if len(s) > maxIDField {
			return ipl.IbisIdentifier{}, fmt.Errorf("%w: an identifier field of %d bytes", ErrMalformed, len(s))
		}
		f[i] = s
	}
	id := ipl.IbisIdentifier{Pool: f[0], ID: f[1], Address: f[2], Tag: f[3]}
	if id.ID == "" {
		return id, fmt.Errorf("%w: an identifier without an ID", ErrMalformed)
	}
	return id, nil
}

// write writes the header's fields for its type.
func (h *header) write(m writer) error {
	errs := []error{m.WriteByte(h.typ)}
	switch h.typ {
	case msgSteal:
		errs = append(errs, m.WriteInt64(h.req), writeIdentifier(m, h.peer), m.WriteByte(h.flags), m.WriteInt32(h.hops))
	case msgReply:
		errs = append(errs, m.WriteInt64(h.req), writeIdentifier(m, h.peer), m.WriteByte(boolByte(h.job)))
		if h.job {
			errs = append(errs, m.WriteString(h.kind), m.WriteInt64(h.stamp))
		}
	case msgResult:
		errs = append(errs, m.WriteInt64(h.stamp), m.WriteString(h.fail))
	case msgDone:
		errs = append(errs, m.WriteString(h.fail), m.WriteByte(h.flags))
	case msgStats, msgProbe:
	}
	return errors.Join(errs...)
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// readHeader reads a message's fixed part and checks it against the protocol's bounds.
func readHeader(m reader) (header, error) {
	var h header
	var err error
	if h.typ, err = m.ReadByte(); err != nil {
		return h, err
	}
	switch h.typ {
	case msgSteal:
		if h.req, err = m.ReadInt64(); err != nil {
			return h, err
		}
		if h.peer, err = readIdentifier(m); err != nil {
			return h, err
		}
		if h.flags, err = m.ReadByte(); err != nil {
			return h, err
		}
		if h.flags&^flagAsync != 0 {
			return h, fmt.Errorf("%w: steal flags %#x", ErrMalformed, h.flags)
		}
		if h.hops, err = m.ReadInt32(); err != nil {
			return h, err
		}
		if h.hops < 0 || h.hops > maxHops {
			return h, fmt.Errorf("%w: a steal request after %d hops", ErrMalformed, h.hops)
		}
	case msgReply:
		if h.req, err = m.ReadInt64(); err != nil {
			return h, err
		}
		if h.peer, err = readIdentifier(m); err != nil {
			return h, err
		}
		var b byte
		if b, err = m.ReadByte(); err != nil {
			return h, err
		}
		if b > 1 {
			return h, fmt.Errorf("%w: reply flag %d", ErrMalformed, b)
		}
		if h.job = b == 1; h.job {
			if h.kind, err = m.ReadString(); err != nil {
				return h, err
			}
			if h.kind == "" || len(h.kind) > maxKindName {
				return h, fmt.Errorf("%w: a kind name of %d bytes", ErrMalformed, len(h.kind))
			}
			if h.stamp, err = m.ReadInt64(); err != nil {
				return h, err
			}
		}
	case msgResult:
		if h.stamp, err = m.ReadInt64(); err != nil {
			return h, err
		}
		if h.fail, err = readFailure(m); err != nil {
			return h, err
		}
	case msgDone:
		if h.fail, err = readFailure(m); err != nil {
			return h, err
		}
		if h.flags, err = m.ReadByte(); err != nil {
			return h, err
		}
	case msgStats, msgProbe:
	default:
		return h, fmt.Errorf("%w: message type %d", ErrMalformed, h.typ)
	}
	return h, nil
}

func readFailure(m reader) (string, error) {
	s, err := m.ReadString()
	if err == nil && len(s) > maxFailure {
		return "", fmt.Errorf("%w: a failure text of %d bytes", ErrMalformed, len(s))
	}
	return s, err
}

// maxHops bounds how often a TRS steal request is forwarded.
const maxHops = 1 << 16
