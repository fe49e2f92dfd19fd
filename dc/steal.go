package dc

import (
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// Backoff of an idle worker that finds no work anywhere: it waits a little before the
// next round of requests (woken at once by news), doubling up to a bound, so that an
// idle pool does not flood itself with requests.
const (
	minBackoff = 20 * time.Microsecond
	maxBackoff = 2 * time.Millisecond
)

// steal makes one steal attempt by the runtime's algorithm; a job it gets lands in the
// inbox.
func (rt *Runtime) steal(c *Ctx) {
	local, remote := rt.victims()
	switch rt.o.algo {
	case CRS:
		if len(remote) > 0 {
			rt.stealWideArea(c, remote[rt.rng.IntN(len(remote))])
		}
		if len(local) == 0 {
			if len(remote) == 0 {
				rt.rest(c, 0)
			} else {
				rt.restWideArea()
			}
			return
		}
		rt.stealFrom(c, local[rt.rng.IntN(len(local))], len(local))
	case TRS:
		all := append(local, remote...)
		if len(all) == 0 {
			rt.rest(c, 0)
			return
		}
		victim := all[rt.rng.IntN(len(all))]
		if c.failures == 0 {
			rt.mu.Lock()
			if lv := rt.lastVictim; lv.ID != "" && !rt.dead[lv.ID] {
				victim = lv
			}
			rt.mu.Unlock()
		}
		rt.stealFrom(c, victim, len(all))
	default:
		all := append(local, remote...)
		if len(all) == 0 {
			rt.rest(c, 0)
			return
		}
		rt.stealFrom(c, all[rt.rng.IntN(len(all))], len(all))
	}
}

// victims lists the live peers of this process's site and of the others.
func (rt *Runtime) victims() (local, remote []ipl.IbisIdentifier) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for _, m := range rt.members {
		if m.Tag == rt.site {
			local = append(local, m)
		} else {
			remote = append(remote, m)
		}
	}
	return local, remote
}

// stealFrom asks victim for a job and waits for the answer (which, under TRS, may come
// from another process the request was passed on to).
func (rt *Runtime) stealFrom(c *Ctx, victim ipl.IbisIdentifier, nvictims int) {
	w := &stealWait{victim: victim.ID, ch: make(chan stealAnswer, 1)}
	rt.mu.Lock()
	rt.nextReq++
	req := rt.nextReq
	rt.waits[req] = w
	rt.mu.Unlock()
	c.stats.StealAttempts++
	if victim.Tag != rt.site {
		c.stats.WideAreaAttempts++
	}
	var ans stealAnswer
	if err := rt.sendSteal(victim, &header{typ: msgSteal, req: req, peer: rt.self}); err == nil {
		timer := time.NewTimer(rt.o.stealTimeout)
		select {
		case ans = <-w.ch:
		case <-rt.ended:
		case <-timer.C:
		}
		timer.Stop()
	}
	rt.mu.Lock()
	delete(rt.waits, req)
	if ans.ok {
		rt.lastVictim = ans.giver
	}
	rt.mu.Unlock()
	if ans.ok {
		c.stats.Steals++
		c.failures = 0
		return
	}
	c.failures++
	if c.failures%nvictims == 0 {
		rt.rest(c, nvictims)
	}
}

// stealWideArea sends CRS's asynchronous wide-area request, unless one is outstanding
// or the back-off after a refused one has not passed (see wanState).
func (rt *Runtime) stealWideArea(c *Ctx, victim ipl.IbisIdentifier) {
	now := time.Now()
	rt.mu.Lock()
	if rt.wan.busy && now.Sub(rt.wan.sent) >= rt.o.stealTimeout {
		// No answer within the steal timeout: give the request up as refused.
		for req, w := range rt.waits {
			if w.async {
				delete(rt.waits, req)
			}
		}
		rt.wan.refused(now, false)
	}
	if !rt.wan.mayAsk(now) {
		rt.mu.Unlock()
		return
	}
	rt.wan.asking(now)
	rt.nextReq++
	req := rt.nextReq
	rt.waits[req] = &stealWait{victim: victim.ID, async: true}
	rt.mu.Unlock()
	c.stats.StealAttempts++
	c.stats.WideAreaAttempts++
	if err := rt.sendSteal(victim, &header{typ: msgSteal, req: req, peer: rt.self, flags: flagAsync}); err != nil {
		rt.mu.Lock()
		if _, ok := rt.waits[req]; ok {
			delete(rt.waits, req)
			rt.wan.refused(time.Now(), false)
		}
		rt.mu.Unlock()
	}
}

// restWideArea is CRS's wait when the process's site has no other process: until news
// (the answer to the wide-area request, a result, the end) or until the next wide-area
// request is due.
func (rt *Runtime) restWideArea() {
	rt.mu.Lock()
	d := rt.wan.wait(time.Now(), rt.o.stealTimeout)
	rt.mu.Unlock()
	timer := time.NewTimer(d)
	select {
	case <-rt.wake:
	case <-rt.ended:
	case <-timer.C:
	}
	timer.Stop()
}

// rest waits, after a round of refusals, until there is news or the backoff has passed.
func (rt *Runtime) rest(c *Ctx, rounds int) {
	d := minBackoff << min(c.failures/max(rounds, 1), 10)
	d = min(d, maxBackoff)
	timer := time.NewTimer(d)
	select {
	case <-rt.wake:
	case <-rt.ended:
	case <-timer.C:
	}
	timer.Stop()
}
