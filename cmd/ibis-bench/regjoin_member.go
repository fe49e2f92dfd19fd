package main

// A process full of pool members for the registry-join experiment: each member its
// own registry.Client with its own connection, all joining at the order "go", each
// waiting until it has seen every member's Joined event.

import (
	"context"
	"encoding/json"
	"fmt"
	"hash"
	"hash/fnv"
	"io"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/registry"
)

// membersResult is what a member process reports, one entry per member.
type membersResult struct {
	// JoinNS is how long each member's Join took, from the call to its return.
	JoinNS []int64 `json:"join_ns"`
	// SeenUnixNS is when (wall clock, ns since 1970) each member had seen all N
	// Joined events; 0 if it did not.
	SeenUnixNS []int64 `json:"seen_unix_ns"`
	// Order is a hash of the members named by the Joined events, in the order each
	// member saw them: every member of a total order has the same.
	Order []uint64 `json:"order"`
	// Fronts counts the members by the front end they joined.
	Fronts map[string]int `json:"fronts"`
	// Errors are what went wrong, at most one per member.
	Errors []string `json:"errors,omitempty"`
}

// runMembers runs r.Count members: it says "ready", joins them all when "go" comes on
// in, says "result JSON" once every member has seen all Joined events (or failed), and
// keeps them until in closes.
func runMembers(ctx context.Context, r regjoinRole, in io.Reader, out io.Writer, log *zap.Logger) error {
	if _, err := raiseFileLimit(uint64(r.Count + 256)); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	orders := watchStdin(in)
	if _, err := fmt.Fprintln(out, "ready"); err != nil {
		return fmt.Errorf("member process: %w", err)
	}
	for started := false; !started; {
		select {
		case o, ok := <-orders:
			if !ok {
				return nil // the experiment ended before the start
			}
			started = o == "go"
		case <-ctx.Done():
			return fmt.Errorf("member process: no go: %w", ctx.Err())
		}
	}
	stopProfile, err := startCPUProfile(r.Profile)
	if err != nil {
		return err
	}
	defer func() { _ = stopProfile() }()
	ms := make([]*joiner, r.Count)
	var wg sync.WaitGroup
	// A member that cannot join spoils the run: nobody will see all N
	// Joined events, so the others stop waiting at once and the failure is
	// reported now, not at the run's limit.
	jctx, spoilt := context.WithCancelCause(ctx)
	defer spoilt(nil)
	for i := range ms {
		ms[i] = &joiner{total: r.Members, seen: make(chan struct{}), failed: make(chan struct{}), order: fnv.New64a()}
		wg.Go(func() {
			if err := ms[i].run(jctx, r, i, log); err != nil {
				spoilt(fmt.Errorf("member %d of this process could not join: %w", i, err))
			}
		})
	}
	wg.Wait()
	b, err := json.Marshal(collect(ms))
	if err != nil {
		return fmt.Errorf("member process: %w", err)
	}
	if _, err := fmt.Fprintf(out, "result %s\n", b); err != nil {
		return fmt.Errorf("member process: %w", err)
	}
	// Keep the members until the experiment is over. They end with the
	// process: their connections close, as when a process of a pool ends.
	for {
		select {
		case _, ok := <-orders:
			if !ok {
				return nil
			}
		case <-ctx.Done():
			return fmt.Errorf("member process: %w", ctx.Err())
		}
	}
}

// joiner is one member and what it saw.
type joiner struct {
	total  int
	joinNS int64
	front  string
	seen   chan struct{} // closed when all total Joined events came
	failed chan struct{} // closed when err is set

	mu      sync.Mutex
	joined  int
	lastSeq uint64
	order   hash.Hash64
	hash    uint64
	seenAt  int64
	err     error // the first thing that went wrong
}

// run joins the pool and waits until the member has seen every Joined event; it
// returns the error of a Join that failed.
func (j *joiner) run(ctx context.Context, r regjoinRole, i int, log *zap.Logger) error {
	start := time.Now()
	c, err := registry.Join(ctx, r.Addrs, r.Pool, registry.WithEventHandler(j.event),
		registry.WithTag(fmt.Sprintf("p%d-m%d", r.Index, i)), registry.WithLogger(log))
	j.joinNS = time.Since(start).Nanoseconds()
	if err != nil {
		j.fail(err)
		return err
	}
	j.front = c.Addr()
	select {
	case <-j.seen:
	case <-j.failed: // an event said the run is spoilt
	case <-c.Done():
		j.fail(fmt.Errorf("member ended: %w", c.Err()))
	case <-ctx.Done():
		j.mu.Lock()
		n := j.joined
		j.mu.Unlock()
		j.fail(fmt.Errorf("saw %d of %d Joined events: %w", n, j.total, context.Cause(ctx)))
	}
	return nil
}

// event is the member's event handler: it counts the Joined events, hashes their
// order, and takes any gap or repetition in the sequence numbers, any other member's
// leaving or death, and any loss of the registry for a failure of the run.
func (j *joiner) event(ev registry.Event) {
	now := time.Now().UnixNano()
	j.mu.Lock()
	defer j.mu.Unlock()
	if ev.Seq != 0 {
		if ev.Seq <= j.lastSeq {
			j.failLocked(fmt.Errorf("event #%d (%v) after #%d", ev.Seq, ev.Type, j.lastSeq))
		}
		j.lastSeq = ev.Seq
	}
	switch ev.Type {
	case registry.Joined:
		j.joined++
		_, _ = j.order.Write([]byte(ev.Member.ID))
		_, _ = j.order.Write([]byte{0})
		switch {
		case j.joined == j.total:
			j.seenAt, j.hash = now, j.order.Sum64()
			close(j.seen)
		case j.joined > j.total:
			j.failLocked(fmt.Errorf("%d Joined events in a pool of %d, the last %v", j.joined, j.total, ev))
		}
	case registry.Left, registry.Died, registry.RegistryLost, registry.RegistryRestored:
		j.failLocked(fmt.Errorf("unexpected event during the join: %v", ev))
	}
}

func (j *joiner) fail(err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.failLocked(err)
}

func (j *joiner) failLocked(err error) {
	if j.err == nil {
		j.err = err
		close(j.failed)
	}
}

// collect gathers the members' figures for the report.
func collect(ms []*joiner) membersResult {
	res := membersResult{Fronts: map[string]int{}}
	for _, j := range ms {
		j.mu.Lock()
		res.JoinNS = append(res.JoinNS, j.joinNS)
		res.SeenUnixNS = append(res.SeenUnixNS, j.seenAt)
		res.Order = append(res.Order, j.hash)
		if j.front != "" {
			res.Fronts[j.front]++
		}
		if j.err != nil {
			res.Errors = append(res.Errors, j.err.Error())
		}
		j.mu.Unlock()
	}
	return res
}
