//go:build linux

package registryha

import (
	"fmt"
	"slices"

	"github.com/ibisgo/ibis/registry"
)

// maxFindings bounds how many violations check reports, so that one broken promise
// does not bury the others under thousands of lines.
const maxFindings = 30

// record is what one member leaves for the checker.
type record struct {
	name    string // for messages
	id      registry.Identifier
	joinSeq uint64           // the Seq of its own Joined event
	events  []registry.Event // every event it received, in order
	ended   error            // why its client ended; nil while it runs
}

// ledger is what the test's calls returned.
type ledger struct {
	elected   map[string]map[registry.Identifier]int // election -> winners Elect returned, counted
	seqs      map[string][]int64                     // sequence -> numbers Sequence returned
	seqFailed map[string]int                         // sequence -> Sequence calls that failed and were made again
	signals   []sentSignal                           // Signal calls that succeeded
}

func newLedger() ledger {
	return ledger{
		elected:   make(map[string]map[registry.Identifier]int),
		seqs:      make(map[string][]int64),
		seqFailed: make(map[string]int),
	}
}

// check holds what the members recorded to the registry's promises (see verify) and
// fails the test for each one broken. Call it once every member has seen every event
// (see world.sync).
func (w *world) check() {
	t := w.t
	t.Helper()
	w.mu.Lock()
	ms := slices.Clone(w.members)
	l := ledger{elected: w.elected, seqs: w.seqs, seqFailed: w.seqFailed, signals: slices.Clone(w.signals)}
	recs := make([]record, len(ms))
	for i, m := range ms {
		recs[i] = record{name: m.String(), id: m.id, joinSeq: m.joinSeq, events: m.rec.snapshot()}
		select {
		case <-m.c.Done():
			recs[i].ended = fmt.Errorf("client ended: %w", m.c.Err())
		default:
		}
	}
	violations, notes := verify(recs, l)
	w.mu.Unlock()
	for _, n := range notes {
		t.Log(n)
	}
	for i, v := range violations {
		if i == maxFindings {
			t.Errorf("%d more violations left out", len(violations)-maxFindings)
			break
		}
		t.Error(v)
	}
}

// verify returns every broken promise in the members' records and the test's ledger,
// and notes worth a line in the log. The promises:
//   - per member, pool events in strictly increasing Seq (no duplicate, no
//     reordering), and from its own Joined on no gap (the tests send no signal to
//     chosen members, so every later event goes to every member);
//   - the same event at the same Seq for every member that saw that Seq;
//   - one winner per election: every Elect of it returned the same member, and
//     there is one Elected event for it, naming that member;
//   - no Died event for a member that is alive, and every member alive;
//   - RegistryLost and RegistryRestored in turns, beginning with RegistryLost and
//     ending with RegistryRestored: every member that lost its front end is back;
//   - the numbers of a sequence unique and without gap, but for as many numbers
//     as there were failed draws (a draw whose answer was lost may have taken one);
//   - every signal that Signal reported sent reached its sender (and so, by the
//     rules above, everyone who was a member then).
func verify(recs []record, l ledger) (violations, notes []string) {
	fail := func(format string, args ...any) { violations = append(violations, fmt.Sprintf(format, args...)) }

	alive := make(map[string]*record, len(recs))
	for i := range recs {
		r := &recs[i]
		alive[r.id.ID] = r
		if r.ended != nil {
			fail("%s ended: %v", r.name, r.ended)
		}
	}

	global := make(map[uint64]registry.Event)
	firstSaw := make(map[uint64]string)
	signalsSeen := make(map[sentSignal]bool)
	buried := make(map[registry.Identifier]bool)
	for _, r := range recs {
		var last uint64
		lost := false
		for _, ev := range r.events {
			switch ev.Type {
			case registry.RegistryLost:
				if lost {
					fail("%s: RegistryLost %q while the registry was lost already", r.name, ev.Name)
				}
				lost = true
				continue
			case registry.RegistryRestored:
				if !lost {
					fail("%s: RegistryRestored without a RegistryLost before it", r.name)
				}
				lost = false
				continue
			}
			switch {
			case ev.Seq <= last:
				fail("%s: event %v came after seq %d (a duplicate or out of order)", r.name, ev, last)
			case ev.Seq > r.joinSeq && ev.Seq != last+1:
				fail("%s: gap: seq %d to %d missing before event %v", r.name, last+1, ev.Seq-1, ev)
			}
			last = max(last, ev.Seq)
			if g, ok := global[ev.Seq]; !ok {
				global[ev.Seq], firstSaw[ev.Seq] = ev, r.name
			} else if g != ev {
				fail("seq %d: %s saw %v, but %s saw %v", ev.Seq, firstSaw[ev.Seq], g, r.name, ev)
			}
			switch ev.Type {
			case registry.Died:
				if dead, ok := alive[ev.Member.ID]; ok {
					fail("%s: event %v declares dead %s, which is alive", r.name, ev, dead.name)
				} else if !buried[ev.Member] {
					buried[ev.Member] = true
					notes = append(notes, fmt.Sprintf("event %v buries a join that the registry recorded but never "+
						"answered (its front end ended first); the client joined again under another identity", ev))
				}
			case registry.Signal:
				if ev.Member.ID == r.id.ID {
					signalsSeen[sentSignal{from: r.id, text: ev.Name}] = true
				}
			}
		}
		if r.joinSeq == 0 {
			fail("%s: no Joined event of its own", r.name)
		}
		if lost {
			fail("%s: its last RegistryLost was never followed by RegistryRestored", r.name)
		}
	}

	electedEvents := make(map[string][]registry.Event)
	for _, ev := range global {
		if ev.Type == registry.Elected {
			electedEvents[ev.Name] = append(electedEvents[ev.Name], ev)
		}
	}
	for name, winners := range l.elected {
		if len(winners) != 1 {
			fail("election %q: Elect returned different winners: %v", name, winners)
			continue
		}
		var winner registry.Identifier
		for id := range winners {
			winner = id
		}
		switch evs := electedEvents[name]; {
		case len(evs) != 1:
			fail("election %q: %d Elected events, want 1: %v", name, len(evs), evs)
		case evs[0].Member != winner:
			fail("election %q: Elected event %v, but Elect returned %s", name, evs[0], winner)
		}
	}

	for name, vals := range l.seqs {
		if len(vals) == 0 {
			continue
		}
		sorted := slices.Sorted(slices.Values(vals))
		if d := len(sorted) - len(slices.Compact(slices.Clone(sorted))); d > 0 {
			fail("sequence %q: %d numbers handed out twice: %v", name, d, sorted)
			continue
		}
		missing := int(sorted[len(sorted)-1]) + 1 - len(sorted)
		switch {
		case sorted[0] < 0:
			fail("sequence %q: negative number %d", name, sorted[0])
		case missing > l.seqFailed[name]:
			fail("sequence %q: %d numbers missing below %d, but only %d draws failed: %v",
				name, missing, sorted[len(sorted)-1], l.seqFailed[name], sorted)
		case missing > 0:
			notes = append(notes, fmt.Sprintf("sequence %q: %d numbers missing, taken by draws that failed and were made again",
				name, missing))
		}
	}

	for _, s := range l.signals {
		if _, ok := alive[s.from.ID]; ok && !signalsSeen[s] {
			fail("signal %q of %s was reported sent, but its sender never saw it", s.text, s.from)
		}
	}
	n := 0
	for _, v := range l.seqs {
		n += len(v)
	}
	notes = append(notes, fmt.Sprintf("checked %d members, %d events, %d elections, %d signals, %d sequence numbers",
		len(recs), len(global), len(l.elected), len(l.signals), n))
	return violations, notes
}
