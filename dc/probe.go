package dc

import (
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// probeInterval is how often a process whose registry is lost for good checks that the
// others still take its messages.
const probeInterval = time.Second

// probe runs once the registry is lost for good, until the run ends: every
// probeInterval it sends every other process an empty message. A process the registry
// declared dead finds its connections cut by the others, so a probe fails within about
// an interval of it being resumed, and the failure ends the run here (unreachable),
// even while its worker computes a long job and sends nothing itself. In a pool that
// only lost its registry every probe arrives and the run goes on.
func (rt *Runtime) probe() {
	tick := time.NewTicker(probeInterval)
	defer tick.Stop()
	for {
		rt.mu.Lock()
		targets := make([]ipl.IbisIdentifier, 0, len(rt.members))
		for _, m := range rt.members {
			targets = append(targets, m)
		}
		rt.mu.Unlock()
		for _, m := range targets {
			if p := rt.peerFor(m); p != nil {
				_ = rt.sendNow(p, &header{typ: msgProbe}, nil, probeInterval, nil)
			}
		}
		select {
		case <-rt.life.Done():
			return
		case <-rt.ended:
			return
		case <-tick.C:
		}
	}
}
