package main

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/ibisgo/ibis/ipl"
)

// handleLatency serves the latency experiment in the peer: one instance per variant
// with an echo goroutine each. It answers once every echo is connected, then waits
// on its requests port for the close command, closes the instances (which ends the
// echoes) and answers again. Each answer is "" or what went wrong.
func handleLatency(ctx context.Context, s *peerService, m ipl.ReadMessage) error {
	var a latArgs
	err := m.ReadObject(&a)
	if _, ferr := m.Finish(); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	if len(a.Variants) == 0 || len(a.Variants) > 64 || a.Size < 0 || a.Size > 1<<20 {
		return fmt.Errorf("%w: bad latency arguments (%d variants, size %d)", errNotAnswer, len(a.Variants), a.Size)
	}
	var ends []*latEnd
	var wg sync.WaitGroup
	closeAll := func() error {
		var errs []error
		for _, le := range ends {
			errs = append(errs, le.close())
		}
		wg.Wait()
		ends = nil
		return errors.Join(errs...)
	}
	defer closeAll()
	var setupErr error
	for i := range a.Variants {
		le, err := openLatEnd(ctx, s.e, a, i, true)
		if err != nil {
			setupErr = err
			break
		}
		ends = append(ends, le)
		wg.Go(func() { echo(ctx, le) })
	}
	if err := s.answer(ctx, func(w ipl.WriteMessage) error { return w.WriteString(errText(setupErr)) }); err != nil {
		return err
	}
	cmd, err := readLatencyCommand(ctx, s.in)
	if err != nil || cmd == 0 {
		return err
	}
	err = closeAll()
	return s.answer(ctx, func(w ipl.WriteMessage) error { return w.WriteString(errText(err)) })
}

// echo sends every message back until its instance closes.
func echo(ctx context.Context, le *latEnd) {
	for {
		if le.receive(ctx) != nil || le.send(ctx) != nil {
			return
		}
	}
}

// readLatencyCommand reads the coordinator's next command: 0 when the coordinator
// ends the run instead.
func readLatencyCommand(ctx context.Context, in ipl.ReceivePort) (byte, error) {
	m, err := in.Receive(ctx)
	if err != nil {
		return 0, err
	}
	o, err := m.ReadByte()
	var cmd byte
	switch {
	case err != nil:
	case op(o) == opQuit:
	case op(o) != opLatency:
		err = fmt.Errorf("%w: request %d while serving the latency echoes", errNotAnswer, o)
	default:
		cmd, err = m.ReadByte()
		if err == nil && cmd != latCmdClose {
			err = fmt.Errorf("%w: latency command %d", errNotAnswer, cmd)
		}
	}
	if _, ferr := m.Finish(); err == nil {
		err = ferr
	}
	return cmd, err
}
