package registry_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/etcdtest"
	"github.com/ibisgo/ibis/registry"
)

// haFront starts a front end with the timeouts of the report of the event log
// printed twice (ibis-registry -heartbeat 1s -death-timeout 10s: one cut off
// from etcd stops serving after 3 s, its lease lasts 10 s) and waits until it
// serves.
func haFront(t *testing.T, opts ...registry.ServerOption) *registry.Server {
	t.Helper()
	return startReady(t, append([]registry.ServerOption{
		registry.WithHeartbeatInterval(time.Second), registry.WithDeathTimeout(10 * time.Second)}, opts...)...)
}

// A front end that starts anew over etcd (cut off from it long enough to stop
// serving, as one stopped with SIGSTOP is) forgets its pools and rebuilds them
// from the whole log. Its event log shows each event once all the same, those
// it missed while cut off included (a pool of a name that ended began anew
// meanwhile, numbering its events from #1 again): the same lines as the log of
// a front end that never stopped (docs/REGISTRY-HA.md). Its statistics count
// each event once too.
func TestEtcdEventLogOnceAcrossRestart(t *testing.T) {
	eps := etcdtest.Embedded(t)
	px := etcdtest.NewProxy(t, eps[0])
	var logA, logB syncBuffer
	a := haFront(t, registry.WithEtcdStore([]string{px.Addr()}), registry.WithEventLog(&logA))
	b := haFront(t, registry.WithEtcdStore(eps), registry.WithEventLog(&logB))
	ctx := testContext(t)

	// Pool "run" lives on at b; pool "over" ends before the cut (its ops stay
	// in etcd until they are pruned).
	c0 := join(t, b, "run")
	c1 := join(t, b, "run")
	if _, err := c0.Elect(ctx, "sink"); err != nil {
		t.Fatal(err)
	}
	if err := c1.Signal(ctx, "before"); err != nil {
		t.Fatal(err)
	}
	over := join(t, b, "over")
	if err := over.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	waitEventLog(t, &logA, "Left over/0")

	px.Cut()
	eventually(t, "cut front end not serving", func() bool { return a.Ready() != nil })
	if err := c1.Signal(ctx, "during"); err != nil {
		t.Fatal(err)
	}
	join(t, b, "over")
	px.Heal()
	eventually(t, "front end serving again", func() bool { return a.Ready() == nil })
	if err := c0.Signal(ctx, "after"); err != nil {
		t.Fatal(err)
	}
	waitEventLog(t, &logA, `"after"`)

	want := []string{
		"#1 Joined run/0", "#2 Joined run/1", `#3 Elected run/0 "sink"`, `#4 Signal run/1 "before"`,
		"#1 Joined over/0", "#2 Left over/0",
		`#5 Signal run/1 "during"`, "#1 Joined over/0", // while a was cut off
		`#6 Signal run/0 "after"`,
	}
	gotA, gotB := eventLines(&logA, `"after"`), eventLines(&logB, `"after"`)
	if !slices.Equal(gotB, want) {
		t.Fatalf("the front end that did not stop printed\n%s\nwant\n%s", strings.Join(gotB, "\n"), strings.Join(want, "\n"))
	}
	if !slices.Equal(gotA, want) {
		t.Fatalf("the front end that started anew printed\n%s\nwant (as the other front end)\n%s",
			strings.Join(gotA, "\n"), strings.Join(want, "\n"))
	}
	sa, sb := a.Stats(), b.Stats()
	if sa.Events != sb.Events || sa.Joins != sb.Joins || sa.Leaves != sb.Leaves || sa.Deaths != sb.Deaths ||
		sa.Events != uint64(len(gotA)) {
		t.Fatalf("statistics of the front end that started anew:\n%v\nof the one that did not:\n%v\nevents printed: %d",
			sa, sb, len(gotA))
	}
}

// A front end that starts anew over another etcd (here: its first etcd is gone
// and the other one of its endpoints answers) prints the events of the pools
// it finds there, although their ops have revisions that the first etcd had
// passed: revisions of one etcd say nothing of another's.
func TestEtcdEventLogAnotherStore(t *testing.T) {
	eps1, eps2 := etcdtest.Embedded(t), etcdtest.Embedded(t)
	px1, px2 := etcdtest.NewProxy(t, eps1[0]), etcdtest.NewProxy(t, eps2[0])
	px2.Reset()
	var logF, log2 syncBuffer
	haFront(t, registry.WithEtcdStore([]string{px1.Addr(), px2.Addr()}), registry.WithEventLog(&logF))
	b1 := haFront(t, registry.WithEtcdStore(eps1))
	b2 := haFront(t, registry.WithEtcdStore(eps2), registry.WithEventLog(&log2))
	ctx := testContext(t)

	join(t, b2, "two")
	one := join(t, b1, "one")
	// The front end applies ops of the first etcd past the revisions of the
	// second's ops.
	for i := 0; lastOpRevision(t, eps1) <= lastOpRevision(t, eps2); i++ {
		if err := one.Signal(ctx, "s"); err != nil {
			t.Fatal(err)
		}
		if i == 100 {
			t.Fatal("the first etcd's ops do not pass the second's revisions")
		}
	}
	if err := one.Signal(ctx, "last"); err != nil {
		t.Fatal(err)
	}
	waitEventLog(t, &logF, `"last"`)

	px1.Reset()
	px2.Heal()
	waitEventLog(t, &logF, "Joined two/0")
	got := slices.DeleteFunc(eventLines(&logF, ""), func(l string) bool { return !strings.Contains(l, " two/") })
	if want := eventLines(&log2, ""); !slices.Equal(got, want) {
		t.Fatalf("events of the second etcd's pool printed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// waitEventLog waits until a line of the event log contains s.
func waitEventLog(t *testing.T, log *syncBuffer, s string) {
	t.Helper()
	eventually(t, "event log line with "+s, func() bool { return strings.Contains(log.String(), s) })
}

// eventLines returns the events of an event log, without their times, up to
// the first that contains last (all of them for "").
func eventLines(log *syncBuffer, last string) []string {
	var lines []string
	for l := range strings.Lines(log.String()) {
		_, ev, _ := strings.Cut(strings.TrimSuffix(l, "\n"), " ")
		lines = append(lines, ev)
		if last != "" && strings.Contains(ev, last) {
			break
		}
	}
	return lines
}

// lastOpRevision is the revision of the last op written to the etcd at
// endpoints (0 for none).
func lastOpRevision(t *testing.T, endpoints []string) int64 {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	resp, err := cli.Get(ctx, "/ibis/registry/ops/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	for _, kv := range resp.Kvs {
		last = max(last, kv.CreateRevision)
	}
	return last
}
