package registry

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// An op is one change to the state of the pools: every request that
// changes it (join, leave, elect, signal, ...) and every death becomes an
// op, which the server's store orders and then applies (server_apply.go).
// With the memory store that happens at once; with a shared store every
// front end applies every op, in the one order the store gave them, to its
// own copy of the pools, so that apply must decide from the op and that
// copy alone (never from this front end's configuration or clock).
type op struct {
	kind opKind
	// front and conn name the front end and its connection that proposed
	// the op: the one that answers it, and the connection a member joined
	// or moved on (its owner).
	front uint64
	conn  uint64
	// gone is the front end whose end a frontGone op reports.
	gone uint64
	// limits are the proposing front end's limits on names, so that every
	// front end decides alike.
	limits nameLimits
	// req carries the request: its id, pool, member (Member for a member's
	// request, Rejoin for a takeover), names, targets, address and tag.
	req *message

	// local is the proposing connection, when the op is applied where it
	// was proposed without crossing the store.
	local *serverConn
}

// opKind says what an op does.
type opKind uint8

const (
	opJoin opKind = iota + 1
	opLeave
	opElect
	opSignal
	opTerminate
	opSequence
	opBind
	opUnbind
	// opDied: the connection conn of front broke or fell silent; the
	// member dies if it is still owned by that connection.
	opDied
	// opTakeover: a member lost its front end and came back on conn of
	// front, which now owns it.
	opTakeover
	// opFrontGone: front end gone's lease ended; the members it still
	// owns die.
	opFrontGone
	opLimit // one past the last kind
)

// nameLimits are the limits on names that apply enforces.
type nameLimits struct {
	poolNames       uint32
	poolNameBytes   uint64
	memberNameBytes uint64
}

func (s *Server) nameLimits() nameLimits {
	return nameLimits{
		poolNames:       uint32(s.cfg.maxPoolNames),
		poolNameBytes:   uint64(s.cfg.maxPoolNameBytes),
		memberNameBytes: uint64(s.cfg.maxMemberNameBytes),
	}
}

// Encoding of an op for a shared store: a fixed header, then the request
// as a message body (the decoder of the wire protocol, bounded and fuzzed,
// reads it back).
const (
	opMagic      = 'o'
	opVersion    = 1
	opHeaderSize = 3 + 8*3 + 4 + 8*2
	// maxOpSize bounds an encoded op, far above what a store takes in one
	// write (etcd: 1.5 MiB by default).
	maxOpSize = 8 << 20
)

var errBadOp = errors.New("registry: invalid op in the store")

func (o *op) encode() ([]byte, error) {
	frame, err := encodeFrame(o.req)
	if err != nil {
		return nil, err
	}
	body := frame[frameHeaderSize:]
	b := make([]byte, opHeaderSize, opHeaderSize+len(body))
	b[0], b[1], b[2] = opMagic, opVersion, byte(o.kind)
	binary.BigEndian.PutUint64(b[3:], o.front)
	binary.BigEndian.PutUint64(b[11:], o.conn)
	binary.BigEndian.PutUint64(b[19:], o.gone)
	binary.BigEndian.PutUint32(b[27:], o.limits.poolNames)
	binary.BigEndian.PutUint64(b[31:], o.limits.poolNameBytes)
	binary.BigEndian.PutUint64(b[39:], o.limits.memberNameBytes)
	return append(b, body...), nil
}

// decodeOp reads an op written by encode. Whatever the bytes, it returns
// an error wrapping errBadOp or an op whose kind is known.
func decodeOp(b []byte) (*op, error) {
	switch {
	case len(b) < opHeaderSize:
		return nil, fmt.Errorf("%w: %d bytes, shorter than the %d-byte header", errBadOp, len(b), opHeaderSize)
	case len(b) > maxOpSize:
		return nil, fmt.Errorf("%w: %d bytes, more than the maximum of %d", errBadOp, len(b), maxOpSize)
	case b[0] != opMagic || b[1] != opVersion:
		return nil, fmt.Errorf("%w: header %#x %#x, not an op of version %d", errBadOp, b[0], b[1], opVersion)
	case b[2] == 0 || opKind(b[2]) >= opLimit:
		return nil, fmt.Errorf("%w: unknown kind %d", errBadOp, b[2])
	}
	o := &op{
		kind:  opKind(b[2]),
		front: binary.BigEndian.Uint64(b[3:]),
		conn:  binary.BigEndian.Uint64(b[11:]),
		gone:  binary.BigEndian.Uint64(b[19:]),
		limits: nameLimits{
			poolNames:       binary.BigEndian.Uint32(b[27:]),
			poolNameBytes:   binary.BigEndian.Uint64(b[31:]),
			memberNameBytes: binary.BigEndian.Uint64(b[39:]),
		},
	}
	m, err := decodeMessage(b[opHeaderSize:])
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBadOp, err)
	}
	o.req = m
	return o, nil
}
