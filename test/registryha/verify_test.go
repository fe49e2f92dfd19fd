//go:build linux

package registryha

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ibisgo/ibis/registry"
)

// The checker finds each kind of broken promise in records made up for it, and
// nothing in a record that keeps them all: the fault tests can fail.
func TestVerifyFindsBrokenPromises(t *testing.T) {
	a := registry.Identifier{Pool: poolName, ID: "0", Address: "a:1"}
	b := registry.Identifier{Pool: poolName, ID: "1", Address: "b:1"}
	ev := func(seq uint64, typ registry.EventType, who registry.Identifier, name string) registry.Event {
		return registry.Event{Seq: seq, Type: typ, Member: who, Name: name}
	}
	lost := registry.Event{Type: registry.RegistryLost, Member: a, Name: registry.LostReconnecting + "test"}
	restored := registry.Event{Type: registry.RegistryRestored, Member: a}
	// good is a pool of two in which a moved once and everything went right.
	good := func() ([]record, ledger) {
		common := []registry.Event{
			ev(1, registry.Joined, a, ""), ev(2, registry.Joined, b, ""),
			ev(3, registry.Elected, a, "x"), ev(4, registry.Signal, a, "hi"),
		}
		recA := append(slices.Clone(common[:3]), lost, restored, common[3])
		recs := []record{
			{name: "a", id: a, joinSeq: 1, events: recA},
			{name: "b", id: b, joinSeq: 2, events: slices.Clone(common)},
		}
		l := newLedger()
		l.elected["x"] = map[registry.Identifier]int{a: 2}
		l.seqs["s"] = []int64{1, 0}
		l.signals = []sentSignal{{from: a, text: "hi"}}
		return recs, l
	}
	if violations, _ := verify(good()); len(violations) > 0 {
		t.Fatalf("violations in a good record: %q", violations)
	}

	cases := []struct {
		name  string
		spoil func(recs []record, l *ledger)
		want  string
	}{
		{"gap", func(r []record, _ *ledger) { r[1].events = slices.Delete(r[1].events, 2, 3) }, "gap"},
		{"duplicate", func(r []record, _ *ledger) { r[1].events = append(r[1].events, r[1].events[3]) }, "duplicate"},
		{"out of order", func(r []record, _ *ledger) { r[1].events[2], r[1].events[3] = r[1].events[3], r[1].events[2] }, "out of order"},
		{"another event at a seq", func(r []record, _ *ledger) { r[1].events[3].Name = "ho" }, "but b saw"},
		{"two winners", func(_ []record, l *ledger) { l.elected["x"] = map[registry.Identifier]int{a: 1, b: 1} }, "different winners"},
		{"no Elected event", func(_ []record, l *ledger) { l.elected["y"] = map[registry.Identifier]int{a: 1} }, "0 Elected events"},
		{"Elected names another", func(_ []record, l *ledger) { l.elected["x"] = map[registry.Identifier]int{b: 2} }, "but Elect returned"},
		{"alive member died", func(r []record, _ *ledger) {
			for i := range r {
				r[i].events = append(r[i].events, ev(5, registry.Died, b, ""))
			}
		}, "which is alive"},
		{"member ended", func(r []record, _ *ledger) { r[0].ended = errors.New("gone") }, "ended"},
		{"lost, never restored", func(r []record, _ *ledger) { r[0].events = append(r[0].events, lost) }, "never followed"},
		{"restored, never lost", func(r []record, _ *ledger) { r[1].events = append(r[1].events, restored) }, "without a RegistryLost"},
		{"lost twice", func(r []record, _ *ledger) { r[0].events = slices.Insert(r[0].events, 3, lost) }, "lost already"},
		{"number twice", func(_ []record, l *ledger) { l.seqs["s"] = []int64{0, 1, 1} }, "handed out twice"},
		{"number missing", func(_ []record, l *ledger) { l.seqs["s"] = []int64{0, 2} }, "missing"},
		{"signal lost", func(_ []record, l *ledger) { l.signals = append(l.signals, sentSignal{from: a, text: "lost"}) }, "never saw it"},
		{"no own Joined", func(r []record, _ *ledger) { r[1].joinSeq = 0 }, "no Joined event"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			recs, l := good()
			c.spoil(recs, &l)
			violations, _ := verify(recs, l)
			if !slices.ContainsFunc(violations, func(v string) bool { return strings.Contains(v, c.want) }) {
				t.Fatalf("violations %q, want one saying %q", violations, c.want)
			}
		})
	}

	// A number missing for each failed draw is allowed: its answer was lost.
	recs, l := good()
	l.seqs["s"], l.seqFailed["s"] = []int64{0, 2}, 1
	if violations, _ := verify(recs, l); len(violations) > 0 {
		t.Fatalf("a number missing after a failed draw: %q", violations)
	}
}
