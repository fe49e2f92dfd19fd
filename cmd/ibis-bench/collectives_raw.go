package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"time"

	"github.com/ibisgo/ibis/mpj"
)

// The raw-socket baselines of Barrier: mpj's two message patterns (gather to rank 0
// and release, which mpj's Barrier uses up to 8 ranks, and dissemination, beyond), one
// byte per signal over a plain TCP connection between every two ranks (127.0.0.1,
// TCP_NODELAY), read by the waiting goroutine itself. They are what Go and the kernel
// cost for each pattern with nothing of Ibis or mpj in between, timed exactly as mpj's
// Barrier, so that mpj/raw (same pattern) is the price of the ports and mpj layer, and
// raw/Open MPI that of Go's sockets against Open MPI's polling.

// rawMesh is a TCP connection from this rank to every other.
type rawMesh struct {
	rank  int
	conns []*net.TCPConn // by rank; nil for this rank
	buf   [1]byte
}

// rawTimeout bounds the raw mesh's set-up and every read and write of its measurement.
const rawTimeout = 2 * time.Minute

// newRawMesh connects every two ranks of c: each listens on 127.0.0.1 (a port the
// kernel picks), the ports are allgathered through mpj, each rank dials the ranks
// above it and accepts those below, which name themselves in their first 4 bytes.
func newRawMesh(ctx context.Context, c *mpj.Comm) (m *rawMesh, err error) {
	p, me := c.Size(), c.Rank()
	m = &rawMesh{rank: me, conns: make([]*net.TCPConn, p)}
	defer func() {
		if err != nil {
			m.close()
		}
	}()
	deadline := time.Now().Add(rawTimeout)
	l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("raw baseline: %w", err)
	}
	defer l.Close()
	_ = l.(*net.TCPListener).SetDeadline(deadline)
	ports := make([]int32, p)
	if err := c.Allgather(ctx, []int32{int32(l.Addr().(*net.TCPAddr).Port)}, ports); err != nil {
		return nil, fmt.Errorf("raw baseline: exchanging ports: %w", err)
	}
	d := net.Dialer{Deadline: deadline}
	for r := me + 1; r < p; r++ {
		conn, err := d.DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", ports[r]))
		if err != nil {
			return nil, fmt.Errorf("raw baseline: dialling rank %d: %w", r, err)
		}
		m.conns[r] = conn.(*net.TCPConn)
		if _, err := conn.Write([]byte{byte(me >> 24), byte(me >> 16), byte(me >> 8), byte(me)}); err != nil {
			return nil, fmt.Errorf("raw baseline: greeting rank %d: %w", r, err)
		}
	}
	for range me {
		conn, err := l.Accept()
		if err != nil {
			return nil, fmt.Errorf("raw baseline: accepting: %w", err)
		}
		var id [4]byte
		_ = conn.SetDeadline(deadline)
		_, err = io.ReadFull(conn, id[:])
		r := int(id[0])<<24 | int(id[1])<<16 | int(id[2])<<8 | int(id[3])
		if err == nil && (r < 0 || r >= me || m.conns[r] != nil) {
			err = fmt.Errorf("a connection names rank %d", r)
		}
		if err != nil {
			conn.Close()
			return nil, fmt.Errorf("raw baseline: accepting: %w", err)
		}
		m.conns[r] = conn.(*net.TCPConn)
	}
	for _, conn := range m.conns {
		if conn != nil {
			_ = conn.SetNoDelay(true)
			_ = conn.SetDeadline(deadline)
		}
	}
	return m, nil
}

func (m *rawMesh) close() {
	for _, conn := range m.conns {
		if conn != nil {
			conn.Close()
		}
	}
}

func (m *rawMesh) signal(r int) error {
	if _, err := m.conns[r].Write(m.buf[:]); err != nil {
		return fmt.Errorf("raw baseline: writing to rank %d: %w", r, err)
	}
	return nil
}

func (m *rawMesh) wait(r int) error {
	if _, err := io.ReadFull(m.conns[r], m.buf[:]); err != nil {
		return fmt.Errorf("raw baseline: reading from rank %d: %w", r, err)
	}
	return nil
}

// barrier is a Barrier over the raw connections: gathered to rank 0 and released
// (flat), or dissemination.
func (m *rawMesh) barrier(flat bool) error {
	p := len(m.conns)
	if !flat {
		for k := 1; k < p; k <<= 1 {
			if err := errors.Join(m.signal((m.rank+k)%p), m.wait((m.rank-k+p)%p)); err != nil {
				return err
			}
		}
		return nil
	}
	if m.rank != 0 {
		return errors.Join(m.signal(0), m.wait(0))
	}
	for r := 1; r < p; r++ {
		if err := m.wait(r); err != nil {
			return err
		}
	}
	for r := 1; r < p; r++ {
		if err := m.signal(r); err != nil {
			return err
		}
	}
	return nil
}

// The raw baselines' operation names among mpj's points (collMeasure).
const (
	rawFlatOp   = "barrier-raw-flat"
	rawDissemOp = "barrier-raw-dissemination"
)

// rawBarriers times both raw barriers as collMeasure times mpj's Barrier: warmup calls,
// then reps repetitions each after the same synchronisation, the per-repetition
// maximum over the ranks agreed on with an Allreduce.
func rawBarriers(ctx context.Context, c *mpj.Comm, cfg collConfig) ([]collPoint, error) {
	m, err := newRawMesh(ctx, c)
	if err != nil {
		return nil, err
	}
	defer m.close()
	var out []collPoint
	for _, flat := range []bool{true, false} {
		local := make([]float64, cfg.reps)
		worst := make([]float64, cfg.reps)
		token := []int32{0}
		for range cfg.warmup {
			if err := m.barrier(flat); err != nil {
				return nil, err
			}
		}
		for k := range cfg.reps {
			if err := c.Allreduce(ctx, token, token, mpj.Max); err != nil {
				return nil, err
			}
			start := time.Now()
			if err := m.barrier(flat); err != nil {
				return nil, err
			}
			local[k] = time.Since(start).Seconds()
		}
		if err := c.Allreduce(ctx, local, worst, mpj.Max); err != nil {
			return nil, err
		}
		op := rawDissemOp
		if flat {
			op = rawFlatOp
		}
		out = append(out, collPoint{Op: op, Procs: c.Size(), Seconds: slices.Clone(worst)})
	}
	return out, nil
}

// rawFlatProcs is the largest p at which mpj's Barrier gathers to a root (mpj/small.go).
const rawFlatProcs = 8
