package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// m2oReceiver is the receiving loop of the experiment.
type m2oReceiver struct {
	rp                ipl.ReceivePort
	conns             int
	buf               []byte
	perConn           []int64
	counted, received int64
	from, last, ended time.Time
	load              memSnap // taken at the first message after the window
	loadTaken         bool
	cpuFrom, cpuTo    time.Duration // the process's CPU time at the window's first and last message
	cpuProfile        string        // where to write a CPU profile of the window ("" none)
	stopCPU           func() error  // ends the window's CPU profile; nil when none runs
}

// next receives one message and returns its kind and connection index.
func (r *m2oReceiver) next(ctx context.Context) (byte, int, error) {
	m, err := r.rp.Receive(ctx)
	if err != nil {
		return 0, 0, err
	}
	kind, err := m.ReadByte()
	var id int32
	if err == nil {
		id, err = m.ReadInt32()
	}
	if err == nil && kind == m2oData {
		err = m.ReadArray(r.buf)
	}
	if _, ferr := m.Finish(); err == nil {
		err = ferr
	}
	if err == nil && (id < 0 || int(id) >= r.conns || kind < m2oHello || kind > m2oEnd) {
		err = fmt.Errorf("%w: message kind %d from connection %d", errNotAnswer, kind, id)
	}
	return kind, int(id), err
}

// hellos waits for the hello of every connection.
func (r *m2oReceiver) hellos(ctx context.Context) error {
	seen := make([]bool, r.conns)
	for range r.conns {
		kind, id, err := r.next(ctx)
		if err == nil && (kind != m2oHello || seen[id]) {
			err = fmt.Errorf("%w: kind %d from connection %d while waiting for hellos", errNotAnswer, kind, id)
		}
		if err != nil {
			return fmt.Errorf("waiting for the senders' hellos: %w", err)
		}
		seen[id] = true
	}
	return nil
}

// traffic receives until every connection has sent its end, counting the data
// messages that arrive between from and to.
func (r *m2oReceiver) traffic(ctx context.Context, from, to time.Time) error {
	r.from = from
	ended := make([]bool, r.conns)
	for left := r.conns; left > 0; {
		kind, id, err := r.next(ctx)
		if err != nil {
			return fmt.Errorf("receiving the traffic: %w", err)
		}
		switch kind {
		case m2oData:
			r.received++
			now := time.Now()
			if now.After(from) && !now.After(to) {
				if r.counted == 0 {
					if err := r.startProfile(); err != nil {
						return err
					}
					r.cpuFrom = processCPU()
				}
				r.counted++
				r.perConn[id]++
				r.last = now
			} else if now.After(to) && !r.loadTaken {
				r.cpuTo = processCPU()
				if err := r.stopProfile(); err != nil {
					return err
				}
				r.load, r.loadTaken = takeSnapshot(), true
			}
		case m2oEnd:
			if ended[id] {
				return fmt.Errorf("%w: connection %d ended twice", errNotAnswer, id)
			}
			ended[id] = true
			left--
			r.ended = time.Now()
		default:
			return fmt.Errorf("%w: kind %d from connection %d during the traffic", errNotAnswer, kind, id)
		}
	}
	return nil
}

// startProfile starts the CPU profile of the window, when one was asked for.
func (r *m2oReceiver) startProfile() error {
	if r.cpuProfile == "" {
		return nil
	}
	stop, err := startCPUProfile(r.cpuProfile)
	if err != nil {
		return err
	}
	r.stopCPU = stop
	return nil
}

// stopProfile ends the CPU profile, if one runs.
func (r *m2oReceiver) stopProfile() error {
	if r.stopCPU == nil {
		return nil
	}
	err := r.stopCPU()
	r.stopCPU = nil
	return err
}

// writeHeapProfile writes a heap profile of this process to path.
func writeHeapProfile(path string) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	err = pprof.Lookup("heap").WriteTo(fh, 0)
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	return err
}

// quantiles returns the minimum, median and maximum of xs (zeros for none).
func quantiles(xs []int64) (lo, med, hi int64) {
	if len(xs) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[0], s[len(s)/2], s[len(s)-1]
}
