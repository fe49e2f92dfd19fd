//go:build linux

package registryha

import (
	"slices"

	"github.com/ibisgo/ibis/registry"
)

// maxFindings bounds how many violations check reports, so that one broken promise
// does not bury the others under thousands of lines.
const maxFindings = 30

// check holds what the members recorded to the registry's promises and fails the
// test for each one broken. Call it once every member has seen every event (see
// world.sync). The promises:
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
func (w *world) check() {
	t := w.t
	t.Helper()
	findings := 0
	fail := func(format string, args ...any) {
		t.Helper()
		findings++
		switch {
		case findings < maxFindings:
			t.Errorf(format, args...)
		case findings == maxFindings:
			t.Errorf("more violations left out")
		}
	}

	w.mu.Lock()
	ms := slices.Clone(w.members)
	w.mu.Unlock()

	alive := make(map[string]*member, len(ms))
	for _, m := range ms {
		alive[m.id.ID] = m
		select {
		case <-m.c.Done():
			fail("%s ended: %v", m, m.c.Err())
		default:
		}
	}

	global := make(map[uint64]registry.Event)
	firstSaw := make(map[uint64]*member)
	signalsSeen := make(map[sentSignal]bool)
	buried := make(map[registry.Identifier]bool)
	for _, m := range ms {
		var last uint64
		lost := false
		for _, ev := range m.rec.snapshot() {
			switch ev.Type {
			case registry.RegistryLost:
				if lost {
					fail("%s: RegistryLost %q while the registry was lost already", m, ev.Name)
				}
				lost = true
				continue
			case registry.RegistryRestored:
				if !lost {
					fail("%s: RegistryRestored without a RegistryLost before it", m)
				}
				lost = false
				continue
			}
			switch {
			case ev.Seq <= last:
				fail("%s: event %v came after seq %d (a duplicate or out of order)", m, ev, last)
			case ev.Seq > m.joinSeq && ev.Seq != last+1:
				fail("%s: gap: seq %d to %d missing before event %v", m, last+1, ev.Seq-1, ev)
			}
			last = max(last, ev.Seq)
			if g, ok := global[ev.Seq]; !ok {
				global[ev.Seq], firstSaw[ev.Seq] = ev, m
			} else if g != ev {
				fail("seq %d: %s saw %v, but %s saw %v", ev.Seq, firstSaw[ev.Seq], g, m, ev)
			}
			switch ev.Type {
			case registry.Died:
				if dead, ok := alive[ev.Member.ID]; ok {
					fail("%s: event %v declares dead %s, which is alive", m, ev, dead)
				} else if !buried[ev.Member] {
					buried[ev.Member] = true
					t.Logf("event %v buries a join that the registry recorded but never answered (its front end ended "+
						"first); the client joined again under another identity", ev)
				}
			case registry.Signal:
				if ev.Member.ID == m.id.ID {
					signalsSeen[sentSignal{from: m.id, text: ev.Name}] = true
				}
			}
		}
		if m.joinSeq == 0 {
			fail("%s: no Joined event of its own", m)
		}
		if lost {
			fail("%s: its last RegistryLost was never followed by RegistryRestored", m)
		}
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	electedEvents := make(map[string][]registry.Event)
	for _, ev := range global {
		if ev.Type == registry.Elected {
			electedEvents[ev.Name] = append(electedEvents[ev.Name], ev)
		}
	}
	for name, winners := range w.elected {
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

	for name, vals := range w.seqs {
		sorted := slices.Sorted(slices.Values(vals))
		if d := len(sorted) - len(slices.Compact(slices.Clone(sorted))); d > 0 {
			fail("sequence %q: %d numbers handed out twice: %v", name, d, sorted)
			continue
		}
		missing := int(sorted[len(sorted)-1]) + 1 - len(sorted)
		switch {
		case sorted[0] < 0:
			fail("sequence %q: negative number %d", name, sorted[0])
		case missing > w.seqFailed[name]:
			fail("sequence %q: %d numbers missing below %d, but only %d draws failed: %v",
				name, missing, sorted[len(sorted)-1], w.seqFailed[name], sorted)
		case missing > 0:
			t.Logf("sequence %q: %d numbers missing, taken by draws that failed and were made again", name, missing)
		}
	}

	for _, s := range w.signals {
		if _, ok := alive[s.from.ID]; ok && !signalsSeen[s] {
			fail("signal %q of %s was reported sent, but its sender never saw it", s.text, s.from)
		}
	}
	t.Logf("checked %d members, %d events, %d elections, %d signals, %d sequence numbers",
		len(ms), len(global), len(w.elected), len(w.signals), seqCount(w.seqs))
}

func seqCount(seqs map[string][]int64) int {
	n := 0
	for _, v := range seqs {
		n += len(v)
	}
	return n
}
