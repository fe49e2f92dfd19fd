package registry_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/etcdtest"
	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/registry"
)

// storeCase gives a test two front ends of one store. With the memory
// store both are the same server; with etcd they are two servers over one
// embedded etcd, so members that join "a" and "b" meet across front ends.
type storeCase struct {
	name  string
	start func(t *testing.T, opts ...registry.ServerOption) (a, b *registry.Server)
}

var storeCases = []storeCase{
	{"memory", func(t *testing.T, opts ...registry.ServerOption) (a, b *registry.Server) {
		s := startServer(t, opts...)
		return s, s
	}},
	{"etcd", func(t *testing.T, opts ...registry.ServerOption) (a, b *registry.Server) {
		eps := etcdtest.Embedded(t)
		opts = append(opts, registry.WithEtcdStore(eps))
		return startReady(t, opts...), startReady(t, opts...)
	}},
}

// startReady starts a front end and waits until it serves (it has read
// the store).
func startReady(t *testing.T, opts ...registry.ServerOption) *registry.Server {
	t.Helper()
	s := startServer(t, opts...)
	eventually(t, "front end serving", func() bool { return s.Ready() == nil })
	return s
}

// eachStore runs body once per store.
func eachStore(t *testing.T, body func(t *testing.T, a, b *registry.Server), opts ...registry.ServerOption) {
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			a, b := sc.start(t, opts...)
			body(t, a, b)
		})
	}
}

// joinBoth joins n members to pool, alternately at a and b.
func joinBoth(t *testing.T, a, b *registry.Server, pool string, n int, opts ...registry.Option) []*registry.Client {
	t.Helper()
	cs := make([]*registry.Client, n)
	for i := range cs {
		s := a
		if i%2 == 1 {
			s = b
		}
		cs[i] = join(t, s, pool, opts...)
	}
	return cs
}

// Every member sees the joins and the signals of all in one order, whichever
// front end it is connected to.
func TestStoreTotalOrder(t *testing.T) {
	eachStore(t, func(t *testing.T, a, b *registry.Server) {
		const n, per = 4, 10
		cs := joinBoth(t, a, b, "order", n)
		ctx := testContext(t)
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i, c := range cs {
			wg.Go(func() {
				for j := range per {
					if err := c.Signal(ctx, fmt.Sprintf("s%d-%d", i, j)); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		var reference []registry.Event
		for i, c := range cs {
			var got []registry.Event
			for signals := 0; signals < n*per; {
				ev := nextEvent(t, c)
				if ev.Type == registry.Joined && ev.Member.Number() < i {
					continue // joined before this member: reported with their own numbers
				}
				got = append(got, ev)
				if ev.Type == registry.Signal {
					signals++
				}
			}
			if i == 0 {
				reference = got
				continue
			}
			// Member i saw the joins of members 0..i-1 first; from its own
			// join on, it saw what member 0 saw.
			ref := reference[slices.IndexFunc(reference, isEvent(registry.Joined, c.Identity())):]
			if !reflect.DeepEqual(got, ref) {
				t.Fatalf("member %d saw\n%v\nmember 0 saw\n%v", i, got, ref)
			}
		}
	})
}

// Concurrent candidates at both front ends agree on one winner; a later
// result waits for it; the winner's leaving frees the election.
func TestStoreElections(t *testing.T) {
	eachStore(t, func(t *testing.T, a, b *registry.Server) {
		cs := joinBoth(t, a, b, "elect", 6)
		ctx := testContext(t)
		late := make(chan registry.Identifier, 1)
		go func() {
			w, err := cs[5].ElectionResult(ctx, "later")
			if err != nil {
				t.Error(err)
			}
			late <- w
		}()
		winners := make([]registry.Identifier, len(cs))
		var wg sync.WaitGroup
		for i, c := range cs {
			wg.Go(func() {
				w, err := c.Elect(ctx, "boss")
				if err != nil {
					t.Error(err)
				}
				winners[i] = w
			})
		}
		wg.Wait()
		for i, w := range winners {
			if w != winners[0] {
				t.Fatalf("member %d says %v won, member 0 says %v", i, w, winners[0])
			}
		}
		if _, err := cs[2].Elect(ctx, "later"); err != nil {
			t.Fatal(err)
		}
		if w := <-late; w != cs[2].Identity() {
			t.Fatalf("waiting result: %v, want %v", w, cs[2].Identity())
		}
		var boss *registry.Client
		for _, c := range cs {
			if c.Identity() == winners[0] {
				boss = c
			}
		}
		if err := boss.Leave(ctx); err != nil {
			t.Fatal(err)
		}
		other := cs[0]
		if other == boss {
			other = cs[1]
		}
		waitEvent(t, other, "winner left", isEvent(registry.Left, boss.Identity()))
		if w, err := other.Elect(ctx, "boss"); err != nil || w != other.Identity() {
			t.Fatalf("after the winner left: %v, %v; want %v", w, err, other.Identity())
		}
	})
}

// Sequence numbers drawn at both front ends at once are gap-free and
// unique; signals to targets reach only them.
func TestStoreSequencesAndSignals(t *testing.T) {
	eachStore(t, func(t *testing.T, a, b *registry.Server) {
		cs := joinBoth(t, a, b, "seq", 4)
		ctx := testContext(t)
		const per = 25
		got := make(chan int64, len(cs)*per)
		var wg sync.WaitGroup
		for _, c := range cs {
			wg.Go(func() {
				for range per {
					v, err := c.Sequence(ctx, "n")
					if err != nil {
						t.Error(err)
						return
					}
					got <- v
				}
			})
		}
		wg.Wait()
		close(got)
		var all []int64
		for v := range got {
			all = append(all, v)
		}
		slices.Sort(all)
		for i, v := range all {
			if v != int64(i) {
				t.Fatalf("sequence numbers %v: not 0..%d once each", all, len(all)-1)
			}
		}
		if err := cs[0].Signal(ctx, "to 1 and 2", cs[1].Identity(), cs[2].Identity()); err != nil {
			t.Fatal(err)
		}
		if err := cs[0].Signal(ctx, "to all"); err != nil {
			t.Fatal(err)
		}
		for i, c := range cs {
			ev := waitEvent(t, c, "signal", func(ev registry.Event) bool { return ev.Type == registry.Signal })
			want := "to all"
			if i == 1 || i == 2 {
				want = "to 1 and 2"
			}
			if ev.Name != want {
				t.Fatalf("member %d: first signal %q, want %q", i, ev.Name, want)
			}
		}
	})
}

// A lookup at one front end waits for the binding made at the other; names
// are owned, and go with their owner.
func TestStoreNames(t *testing.T) {
	eachStore(t, func(t *testing.T, a, b *registry.Server) {
		cs := joinBoth(t, a, b, "names", 3)
		ctx := testContext(t)
		type found struct {
			id   registry.Identifier
			port string
			err  error
		}
		res := make(chan found, 1)
		go func() {
			id, port, err := cs[1].Lookup(ctx, "svc")
			res <- found{id, port, err}
		}()
		eventually(t, "lookup parked", func() bool { return b.Stats().Waiting == 1 })
		if err := cs[0].Bind(ctx, "svc", "port-0"); err != nil {
			t.Fatal(err)
		}
		if f := <-res; f.err != nil || f.id != cs[0].Identity() || f.port != "port-0" {
			t.Fatalf("lookup: %+v", f)
		}
		mustErrorIs(t, cs[2].Bind(ctx, "svc", "port-2"), registry.ErrAlreadyBound)
		mustErrorIs(t, cs[1].Unbind(ctx, "svc"), registry.ErrNotBound)
		if err := cs[0].Leave(ctx); err != nil {
			t.Fatal(err)
		}
		waitEvent(t, cs[2], "owner left", isEvent(registry.Left, cs[0].Identity()))
		if err := cs[2].Bind(ctx, "svc", "port-2"); err != nil {
			t.Fatalf("name not freed by its owner's leaving: %v", err)
		}
	})
}

// A closed-world pool closes with its last member at either front end and
// refuses more; Terminate reaches everyone.
func TestStoreClosedWorldAndTerminate(t *testing.T) {
	eachStore(t, func(t *testing.T, a, b *registry.Server) {
		cs := joinBoth(t, a, b, "closed", 3, registry.WithPoolSize(3))
		ctx := testContext(t)
		for _, c := range cs {
			if err := c.WaitUntilPoolClosed(ctx); err != nil {
				t.Fatal(err)
			}
		}
		_, err := registry.Join(ctx, b.Addr(), "closed", registry.WithPoolSize(3), registry.WithLogger(testLogger(t)))
		mustErrorIs(t, err, registry.ErrPoolClosed)
		_, err = registry.Join(ctx, a.Addr(), "closed", registry.WithPoolSize(4), registry.WithLogger(testLogger(t)))
		mustErrorIs(t, err, registry.ErrPoolSize)
		if err := cs[1].Terminate(ctx); err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if err := c.WaitUntilTerminated(ctx); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// The limits on names hold across front ends: the pool's third election
// is refused wherever it is asked for.
func TestStoreLimits(t *testing.T) {
	eachStore(t, func(t *testing.T, a, b *registry.Server) {
		cs := joinBoth(t, a, b, "limits", 2)
		ctx := testContext(t)
		for i, name := range []string{"e1", "e2"} {
			if _, err := cs[i].Elect(ctx, name); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range cs {
			_, err := c.Elect(ctx, "e3")
			mustErrorIs(t, err, registry.ErrTooManyRequests)
		}
	}, registry.WithMaxPoolNames(2))
}

// A member process killed at one front end is declared dead to the
// members at the other.
func TestStoreKilledMemberDies(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	eachStore(t, func(t *testing.T, a, b *registry.Server) {
		c0 := join(t, a, "xdeath")
		c, err := selfexec.Start(context.Background(), []string{selfexec.NoTests}, selfexec.WithStdoutPipe(),
			selfexec.WithEnv(childAddrEnv+"="+b.Addr(), childPoolEnv+"=xdeath"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		line, err := bufio.NewReader(c.StdoutPipe()).ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "joined xdeath/1") {
			t.Fatalf("child: %q, %v (stderr: %s)", line, err, c.Stderr())
		}
		child := waitEvent(t, c0, "child Joined", func(ev registry.Event) bool { return ev.Type == registry.Joined && ev.Member.Tag == "child" }).Member
		if err := c.Signal(os.Kill); err != nil {
			t.Fatal(err)
		}
		waitEvent(t, c0, "Died", isEvent(registry.Died, child))
	})
}

// A front end that has not read its store yet refuses joins with an error
// that a client takes as passing.
func TestStoreNotReadyRefusesJoin(t *testing.T) {
	eps := etcdtest.Embedded(t)
	px := etcdtest.NewProxy(t, eps[0])
	px.Cut()
	s := startServer(t, registry.WithEtcdStore([]string{px.Addr()}))
	ctx, cancel := context.WithTimeout(testContext(t), joinRefusedWait)
	defer cancel()
	_, err := registry.Join(ctx, s.Addr(), "p", registry.WithLogger(testLogger(t)))
	if err == nil || !errors.Is(err, registry.ErrRegistryLost) && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("join at a front end without its store: %v", err)
	}
	if s.Ready() == nil {
		t.Fatal("front end without its store says it is ready")
	}
	px.Heal()
	eventually(t, "front end serving once etcd is reachable", func() bool { return s.Ready() == nil })
	join(t, s, "p")
}

// joinRefusedWait bounds a join that a front end without its store
// refuses: the client may give up at once or keep trying.
const joinRefusedWait = 2 * time.Second
