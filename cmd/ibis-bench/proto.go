package main

import (
	"context"
	"fmt"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/cluster"
	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/payload"
	"github.com/ibisgo/ibis/ipl"
)

// The port types of the suite, declared by every member so that any experiment can
// create its ports: benchType carries the coordinator's requests to one peer and
// the answers back (one pair per peer, explicit receipt, so impl/tcp reads the
// socket on the caller's goroutine), targetType is a peer's port that senders
// connect to again and again (the connect experiment).
var (
	benchType = ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationObject, ipl.ReceiveExplicit,
		ipl.CommunicationReliable, ipl.CommunicationFIFO)
	targetType = ipl.MustPortType(ipl.ConnectionManyToOne, ipl.SerializationObject, ipl.ReceiveExplicit,
		ipl.CommunicationReliable, ipl.CommunicationFIFO)
	benchPortTypes = []ipl.PortType{benchType, targetType}
)

// Port names of the coordinator-peer link.
const (
	portPeerIn  = "bench-in"   // a peer's requests port
	portPeerOut = "bench-out"  // a peer's answers port (a send port)
	portBack    = "bench-back" // the coordinator's answers port for peer i: bench-back-i
)

// An op is the first byte of a request from the coordinator to a peer.
type op byte

// The ops every peer serves. Experiments add their own with registerOp.
const (
	opQuit      op = iota + 1 // the run is over
	opPing                    // answer with an empty message
	opEcho                    // spec, payload: answer with the same payload
	opSink                    // spec, ack flag, payload: answer with an empty message when ack is set
	opRaw                     // answer with the address of this peer's raw-socket server
	opJoin                    // connect experiment: join a pool (see connect.go)
	opWorkers                 // masterworker experiment: run workers (see masterworker.go)
	opManyToOne               // manytoone experiment: open sender connections (see m2osender.go)
	opLatency                 // latency experiment: serve echo variants (see latencypeer.go)
)

// opHandler serves one request: it reads the request's arguments, must finish m
// before any long work, and answers with s.answer when the op has an answer.
type opHandler func(ctx context.Context, s *peerService, m ipl.ReadMessage) error

var opHandlers = map[op]opHandler{}

// registerOp adds a peer op; called from init in the experiment's file.
func registerOp(o op, h opHandler) {
	if _, dup := opHandlers[o]; dup {
		panic(fmt.Sprintf("ibis-bench: op %d registered twice", o))
	}
	opHandlers[o] = h
}

// writeSpec and readSpec carry a payload spec ahead of its payload.
func writeSpec(w ipl.WriteMessage, s payload.Spec) error {
	if err := w.WriteByte(byte(s.Kind)); err != nil {
		return err
	}
	if err := w.WriteInt64(int64(s.Size)); err != nil {
		return err
	}
	return w.WriteInt64(int64(s.Rows))
}

func readSpec(m ipl.ReadMessage) (payload.Spec, error) {
	k, err := m.ReadByte()
	if err != nil {
		return payload.Spec{}, err
	}
	size, err := m.ReadInt64()
	if err != nil {
		return payload.Spec{}, err
	}
	rows, err := m.ReadInt64()
	if err != nil {
		return payload.Spec{}, err
	}
	if size < 0 || size > payload.MaxSize || rows < 0 || rows > payload.MaxSize {
		return payload.Spec{}, fmt.Errorf("%w: size %d, rows %d", payload.ErrSpec, size, rows)
	}
	s := payload.Spec{Kind: payload.Kind(k), Size: int(size), Rows: int(rows)}
	return s, s.Validate()
}

// groupSpec is the pool every network experiment joins.
func (e *env) joinBench(ctx context.Context, members, minMembers int) (*cluster.Group, error) {
	return e.join(ctx, members, minMembers, benchPortTypes...)
}
