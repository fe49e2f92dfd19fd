//go:build linux

package registryha

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/ibisgo/ibis/registry"
)

// poolName is the pool every test forms (each test has an etcd cluster of its own).
const poolName = "ha"

// world is one test's pool as the test sees it: the front ends' address list the
// members join with, the members, and a ledger of the calls that succeeded and of
// those the test had to make again, for the checker.
type world struct {
	t     *testing.T
	addrs string // "a,b": every front end, as IBIS_REGISTRY would list them

	mu      sync.Mutex
	members []*member
	ledger
	retries   map[string]int    // "call: why" -> how often the test made it again
	examples  map[string]string // "call: why" -> the first error seen
	lostJoins []string          // tags of members whose Join failed and was made again

	closeOnce sync.Once
}

// sentSignal is a signal to every member that Signal reported sent.
type sentSignal struct {
	from registry.Identifier
	text string
}

// newWorld makes the pool of a test over the front ends fronts. Its members are
// closed at t.Cleanup, before the front ends started earlier and etcd end (a test
// that starts another front end later registers close again after it); the test
// log then says which calls had to be made again and why.
func newWorld(t *testing.T, fronts ...*frontEnd) *world {
	addrs := make([]string, len(fronts))
	for i, f := range fronts {
		addrs[i] = f.addr
	}
	w := &world{
		t:        t,
		addrs:    strings.Join(addrs, ","),
		ledger:   newLedger(),
		retries:  make(map[string]int),
		examples: make(map[string]string),
	}
	t.Cleanup(w.close)
	return w
}

func (w *world) close() { w.closeOnce.Do(w.leave) }

func (w *world) leave() {
	w.mu.Lock()
	ms := slices.Clone(w.members)
	w.mu.Unlock()
	var wg sync.WaitGroup
	for _, m := range ms {
		wg.Go(func() {
			if err := m.c.Close(); err != nil {
				w.t.Logf("close %s: %v", m, err)
			}
		})
	}
	wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	keys := make([]string, 0, len(w.retries))
	for k := range w.retries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		w.t.Logf("made again %d times: %s (first error: %s)", w.retries[k], k, w.examples[k])
	}
	if len(keys) == 0 {
		w.t.Logf("no call had to be made again")
	}
	if len(w.lostJoins) > 0 {
		w.t.Logf("joins that failed and were made again with a new identity: %v", w.lostJoins)
	}
}

// member is one registry client of the pool, with the record of every event it
// received, in the order received.
type member struct {
	w       *world
	tag     string
	c       *registry.Client
	rec     *recorder
	id      registry.Identifier
	joinSeq uint64 // the Seq of its own Joined event
}

func (m *member) String() string { return m.tag + "=" + m.id.String() }

// recorder keeps a member's events, with the time each arrived, and wakes those
// waiting for one.
type recorder struct {
	mu      sync.Mutex
	events  []registry.Event
	times   []time.Time
	changed chan struct{} // closed and replaced on every event
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{})} }

func (r *recorder) add(ev registry.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
	r.times = append(r.times, time.Now())
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *recorder) snapshot() []registry.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// firstAt returns when the first event of type typ arrived, and false if none did.
func (r *recorder) firstAt(typ registry.EventType) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, ev := range r.events {
		if ev.Type == typ {
			return r.times[i], true
		}
	}
	return time.Time{}, false
}

// join adds a member, tagged tag, that lists every front end; Join picks the one it
// tries first so that the members of the process spread over them. A join that
// fails while a front end goes away is made again with a new client (the pool may
// have taken the failed one in; it buries it when that front end's lease ends).
func (w *world) join(ctx context.Context, tag string) (*member, error) {
	return w.joinVia(ctx, tag, w.addrs)
}

// joinVia is join with the member listing only the front ends at addrs.
func (w *world) joinVia(ctx context.Context, tag, addrs string) (*member, error) {
	backoff := 20 * time.Millisecond
	for {
		rec := newRecorder()
		c, err := registry.Join(ctx, addrs, poolName, registry.WithTag(tag), registry.WithAddress(tag+":1"),
			registry.WithEventHandler(rec.add),
			registry.WithLogger(zaptest.NewLogger(w.t, zaptest.Level(zap.WarnLevel)).Named(tag)))
		if err == nil {
			m := &member{w: w, tag: tag, c: c, rec: rec, id: c.Identity()}
			w.mu.Lock()
			w.members = append(w.members, m)
			w.mu.Unlock()
			// Join returns once the member is in; its events reach the handler
			// a moment later, its own Joined last of the first ones.
			var own registry.Event
			err := m.waitEvents("its own Joined event", func(evs []registry.Event) bool {
				i := slices.IndexFunc(evs, func(ev registry.Event) bool {
					return ev.Type == registry.Joined && ev.Member.ID == m.id.ID
				})
				if i >= 0 {
					own = evs[i]
				}
				return i >= 0
			})
			if err != nil {
				return nil, err
			}
			m.joinSeq = own.Seq
			return m, nil
		}
		if !errors.Is(err, registry.ErrRegistryLost) || ctx.Err() != nil {
			return nil, fmt.Errorf("join %s: %w", tag, err)
		}
		w.noteRetry("Join", err)
		w.mu.Lock()
		w.lostJoins = append(w.lostJoins, tag)
		w.mu.Unlock()
		if perr := pause(ctx, &backoff); perr != nil {
			return nil, fmt.Errorf("join %s: %w (last error: %w)", tag, perr, err)
		}
	}
}

// joinAll joins n members at once, tagged prefix0, prefix1, ...
func (w *world) joinAll(ctx context.Context, prefix string, n int) ([]*member, error) {
	ms := make([]*member, n)
	err := all(n, func(i int) error {
		var err error
		ms[i], err = w.join(ctx, fmt.Sprintf("%s%d", prefix, i))
		return err
	})
	return ms, err
}

// all runs f(0) ... f(n-1) at once and returns their errors joined.
func all(n int, f func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = f(i) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// noteRetry records that call failed with err and is made again.
func (w *world) noteRetry(call string, err error) {
	why := "registry lost (the member is moving to another front end)"
	if errors.Is(err, registry.ErrUnavailable) {
		why = "front end cannot reach etcd (ErrUnavailable)"
	}
	k := call + ": " + why
	w.mu.Lock()
	defer w.mu.Unlock()
	w.retries[k]++
	if _, ok := w.examples[k]; !ok {
		w.examples[k] = err.Error()
	}
}

// pause waits for *backoff and doubles it, up to half a second.
func pause(ctx context.Context, backoff *time.Duration) error {
	t := time.NewTimer(*backoff)
	defer t.Stop()
	*backoff = min(2**backoff, 500*time.Millisecond)
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// do makes a call of m until it succeeds, making it again after an error that says
// the registry is lost for now (the member moves, or its front end cannot reach
// etcd); any other error, or m's end, fails it.
func (m *member) do(ctx context.Context, call string, f func(context.Context) error) error {
	backoff := 20 * time.Millisecond
	for {
		err := f(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-m.c.Done():
			return fmt.Errorf("%s: %s: %w (the client ended: %v)", m, call, err, m.c.Err())
		default:
		}
		if !errors.Is(err, registry.ErrRegistryLost) || ctx.Err() != nil {
			return fmt.Errorf("%s: %s: %w", m, call, err)
		}
		m.w.noteRetry(call, err)
		if perr := pause(ctx, &backoff); perr != nil {
			return fmt.Errorf("%s: %s: %w (last error: %w)", m, call, perr, err)
		}
	}
}

// elect makes m a candidate and records the winner it was told.
func (m *member) elect(ctx context.Context, election string) error {
	var winner registry.Identifier
	err := m.do(ctx, "Elect", func(ctx context.Context) error {
		var err error
		winner, err = m.c.Elect(ctx, election)
		return err
	})
	if err != nil {
		return err
	}
	m.w.mu.Lock()
	defer m.w.mu.Unlock()
	if m.w.elected[election] == nil {
		m.w.elected[election] = make(map[registry.Identifier]int)
	}
	m.w.elected[election][winner]++
	return nil
}

// signal signals every member and records the signal.
func (m *member) signal(ctx context.Context, text string) error {
	err := m.do(ctx, "Signal", func(ctx context.Context) error { return m.c.Signal(ctx, text) })
	if err != nil {
		return err
	}
	m.w.mu.Lock()
	defer m.w.mu.Unlock()
	m.w.signals = append(m.w.signals, sentSignal{from: m.id, text: text})
	return nil
}

// sequence draws a number of the named sequence and records it; a failed draw is
// counted, since the number it may have drawn is lost to the test.
func (m *member) sequence(ctx context.Context, name string) error {
	var v int64
	err := m.do(ctx, "Sequence", func(ctx context.Context) error {
		var err error
		v, err = m.c.Sequence(ctx, name)
		if err != nil {
			m.w.mu.Lock()
			m.w.seqFailed[name]++
			m.w.mu.Unlock()
		}
		return err
	})
	if err != nil {
		return err
	}
	m.w.mu.Lock()
	defer m.w.mu.Unlock()
	m.w.seqs[name] = append(m.w.seqs[name], v)
	return nil
}

// work has every member of ms elect in election "e<round>" (all candidates at once)
// and signal every member; with seq, each also draws a number of sequence "s".
func work(ctx context.Context, ms []*member, round int, seq bool) error {
	return all(len(ms), func(i int) error {
		m := ms[i]
		if err := m.elect(ctx, fmt.Sprintf("e%d", round)); err != nil {
			return err
		}
		if err := m.signal(ctx, fmt.Sprintf("%s round %d", m.tag, round)); err != nil {
			return err
		}
		if seq {
			return m.sequence(ctx, "s")
		}
		return nil
	})
}

// waitEvents waits until m's events satisfy cond; what says what is awaited.
func (m *member) waitEvents(what string, cond func([]registry.Event) bool) error {
	deadline := time.NewTimer(testTimeout)
	defer deadline.Stop()
	for {
		m.rec.mu.Lock()
		ok, changed := cond(m.rec.events), m.rec.changed
		m.rec.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-changed:
		case <-m.c.Done():
			return fmt.Errorf("%s ended (%v) while waiting for %s", m, m.c.Err(), what)
		case <-deadline.C:
			return fmt.Errorf("%s: no %s within %v", m, what, testTimeout)
		}
	}
}

// count returns how many events of type typ evs holds.
func count(evs []registry.Event, typ registry.EventType) int {
	n := 0
	for _, ev := range evs {
		if ev.Type == typ {
			n++
		}
	}
	return n
}

// waitMoved waits until m has lost its front end at least n times and been
// restored as often (RegistryLost, then RegistryRestored).
func (m *member) waitMoved(n int) error {
	return m.waitEvents(fmt.Sprintf("%d RegistryLost and RegistryRestored events", n), func(evs []registry.Event) bool {
		return count(evs, registry.RegistryLost) >= n && count(evs, registry.RegistryRestored) >= n
	})
}

// sync has from signal label, and waits until every member has seen it: then every
// member has every event ordered before it.
func (w *world) sync(ctx context.Context, from *member, label string) error {
	if err := from.signal(ctx, label); err != nil {
		return err
	}
	w.mu.Lock()
	ms := slices.Clone(w.members)
	w.mu.Unlock()
	return all(len(ms), func(i int) error {
		return ms[i].waitEvents("signal "+label, func(evs []registry.Event) bool {
			return slices.ContainsFunc(evs, func(ev registry.Event) bool {
				return ev.Type == registry.Signal && ev.Name == label && ev.Member.ID == from.id.ID
			})
		})
	})
}

// settle waits until every member lists exactly the members alive (Members): a join
// that the registry recorded but never answered leaves a member nobody runs, which
// must be declared dead once its front end's lease has ended, and nobody alive may
// be missing.
func (w *world) settle() error {
	w.mu.Lock()
	ms := slices.Clone(w.members)
	w.mu.Unlock()
	want := make([]string, len(ms))
	for i, m := range ms {
		want[i] = m.id.ID
	}
	slices.Sort(want)
	return all(len(ms), func(i int) error {
		m := ms[i]
		var have []string
		err := m.waitEvents("the members alive, no more, no less", func([]registry.Event) bool {
			have = have[:0]
			for _, id := range m.c.Members() {
				have = append(have, id.ID)
			}
			slices.Sort(have)
			return slices.Equal(have, want)
		})
		if err != nil {
			return fmt.Errorf("%w: it lists members %v, those alive are %v", err, have, want)
		}
		return nil
	})
}

// at returns the members of ms connected to the front end at addr now.
func at(ms []*member, addr string) []*member {
	var on []*member
	for _, m := range ms {
		if m.c.Addr() == addr {
			on = append(on, m)
		}
	}
	return on
}
