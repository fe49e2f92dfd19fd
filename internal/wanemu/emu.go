package wanemu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"time"

	"go.uber.org/zap"
)

// fineWait is the wait below which release sleeps precisely (nanosleep) in steps of
// fineStep instead of on a runtime timer.
const (
	fineWait = 2 * time.Millisecond
	fineStep = 250 * time.Microsecond
)

// maxPacket is the largest packet a TUN device hands over (an IPv4 packet's length field).
const maxPacket = 65535

// Counters count what the emulator did with the packets of a pair of sites.
type Counters struct {
	Packets  uint64 `json:"packets"`   // passed on after the delay
	Bytes    uint64 `json:"bytes"`     // of those packets
	Lost     uint64 `json:"lost"`      // dropped by the link's loss
	Overflow uint64 `json:"overflow"`  // dropped because the pair's queue was full
	Down     uint64 `json:"down"`      // dropped because a site's link was down
	WriteErr uint64 `json:"write_err"` // the device refused them
	// Late is the sum of how much later than due the passed packets were written,
	// LateMax the most: the emulator's own error on top of the delay.
	Late    time.Duration `json:"late_ns"`
	LateMax time.Duration `json:"late_max_ns"`
}

// MeanLate is the mean of how late the passed packets were written.
func (c Counters) MeanLate() time.Duration {
	if c.Packets == 0 {
		return 0
	}
	return c.Late / time.Duration(c.Packets)
}

func (c *Counters) add(o Counters) {
	c.Packets += o.Packets
	c.Bytes += o.Bytes
	c.Lost += o.Lost
	c.Overflow += o.Overflow
	c.Down += o.Down
	c.WriteErr += o.WriteErr
	c.Late += o.Late
	c.LateMax = max(c.LateMax, o.LateMax)
}

// Emulator is the delay line between the sites. Run drives it; Set and Stats may be
// called while it runs.
type Emulator struct {
	log   *zap.Logger
	limit int // bytes per pair
	total int // bytes in all, over all pairs

	mu     sync.Mutex
	sites  []Site
	lines  []line     // pair (a, b) at a*len(sites)+b
	counts []Counters // likewise
	other  uint64     // packets passed at once: not between two known sites
	// otherWriteErr counts those of them the device refused to take back.
	otherWriteErr uint64
	held          int // bytes queued in all lines
	rng           *rand.Rand

	wake chan struct{} // a packet was queued; buffered, one signal is enough
}

// New returns an emulator for cfg, logging to log (nil: nothing).
func New(cfg Config, log *zap.Logger) (*Emulator, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = zap.NewNop()
	}
	n := len(cfg.Sites)
	e := &Emulator{
		log:    log,
		limit:  cfg.QueueBytes,
		sites:  append([]Site(nil), cfg.Sites...),
		lines:  make([]line, n*n),
		counts: make([]Counters, n*n),
		rng:    rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
		wake:   make(chan struct{}, 1),
	}
	if e.limit == 0 {
		e.limit = DefaultQueueBytes
	}
	e.total = cfg.TotalBytes
	if e.total == 0 {
		e.total = DefaultTotalBytes
	}
	for i := range e.lines {
		e.lines[i].limit = e.limit
	}
	return e, nil
}

// site returns the index of the site addr belongs to, or -1.
func (e *Emulator) site(addr netip.Addr) int {
	for i, s := range e.sites {
		for _, p := range s.Prefixes {
			if p.Contains(addr) {
				return i
			}
		}
	}
	return -1
}

// Run reads packets from dev and writes them back after their delay, until dev fails or
// ctx ends (it then closes dev). It returns the read error, or nil after ctx ended.
func (e *Emulator) Run(ctx context.Context, dev io.ReadWriteCloser) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		<-ctx.Done()
		_ = dev.Close() // ends a Read under way
	}()
	go func() {
		defer wg.Done()
		// release sleeps on its own thread, with the kernel's finest timer slack.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		fineTimers()
		e.release(ctx, dev)
	}()
	err := e.receive(dev)
	cancel()
	wg.Wait()
	if ctx.Err() != nil && errors.Is(err, os.ErrClosed) {
		return nil
	}
	return err
}

// receive reads packets and queues them (or passes them at once, or drops them).
func (e *Emulator) receive(dev io.ReadWriter) error {
	buf := make([]byte, maxPacket)
	for {
		n, err := dev.Read(buf)
		if err != nil {
			return fmt.Errorf("wanemu: reading the device: %w", err)
		}
		pkt := append([]byte(nil), buf[:n]...)
		if !e.enqueue(pkt, time.Now()) {
			if _, err := dev.Write(pkt); err != nil {
				if errors.Is(err, os.ErrClosed) {
					return fmt.Errorf("wanemu: writing the device: %w", err)
				}
				e.mu.Lock()
				e.otherWriteErr++
				e.mu.Unlock()
			}
		}
	}
}

// enqueue queues pkt, or drops it, and reports true; false means pass it on at once.
func (e *Emulator) enqueue(pkt []byte, now time.Time) bool {
	src, dst, ok := addrs(pkt)
	e.mu.Lock()
	defer e.mu.Unlock()
	a, b := -1, -1
	if ok {
		a, b = e.site(src), e.site(dst)
	}
	if a < 0 || b < 0 || a == b {
		e.other++
		return false
	}
	i := a*len(e.sites) + b
	sa, sb := &e.sites[a], &e.sites[b]
	switch {
	case sa.Down || sb.Down:
		e.counts[i].Down++
	case e.rng.Float64() < (sa.Loss+sb.Loss)/2:
		e.counts[i].Lost++
	case e.held+len(pkt) > e.total || !e.lines[i].push(pkt, now.Add((sa.Delay+sb.Delay)/2)):
		e.counts[i].Overflow++
	default:
		e.held += len(pkt)
		select {
		case e.wake <- struct{}{}:
		default:
		}
	}
	return true
}

// due takes the packets due at now from every line, with their pair, and says when the
// next one is due (ok false: none is queued).
func (e *Emulator) due(now time.Time, out []held, pairs []int) ([]held, []int, time.Time, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var next time.Time
	have := false
	for i := range e.lines {
		before := len(out)
		out = e.lines[i].popDue(now, out)
		for j := before; j < len(out); j++ {
			pairs = append(pairs, i)
			e.held -= len(out[j].pkt)
		}
		if t, ok := e.lines[i].next(); ok && (!have || t.Before(next)) {
			next, have = t, true
		}
	}
	return out, pairs, next, have
}

// release writes packets to dev as they fall due, until ctx ends or dev is closed.
func (e *Emulator) release(ctx context.Context, dev io.Writer) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var out []held
	var pairs []int
	var sent []Counters
	for {
		var next time.Time
		var have bool
		out, pairs, next, have = e.due(time.Now(), out[:0], pairs[:0])
		sent = sent[:0]
		for _, h := range out {
			late := time.Since(h.due)
			c := Counters{Packets: 1, Bytes: uint64(len(h.pkt)), Late: late, LateMax: late}
			if _, err := dev.Write(h.pkt); err != nil {
				if errors.Is(err, os.ErrClosed) {
					return
				}
				c = Counters{WriteErr: 1}
			}
			sent = append(sent, c)
		}
		if len(out) > 0 {
			e.mu.Lock()
			for k, c := range sent {
				e.counts[pairs[k]].add(c)
			}
			e.mu.Unlock()
			clear(out)
			continue
		}
		wait := time.Hour
		if have {
			wait = time.Until(next)
		}
		if have && wait <= fineWait {
			// The runtime's timers may wake a millisecond late, a tenth of a 10 ms
			// link; the last stretch is slept precisely, in steps short enough to see
			// a packet of a faster pair come in.
			if ctx.Err() != nil {
				return
			}
			nanosleep(min(wait, fineStep))
			continue
		}
		timer.Reset(wait - fineWait)
		select {
		case <-ctx.Done():
			return
		case <-e.wake:
		case <-timer.C:
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// SetLink changes the delay and loss of site's link (site 1 is the first).
func (e *Emulator) SetLink(site int, delay time.Duration, loss float64) error {
	if err := checkLink(delay, loss); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.checkSite(site); err != nil {
		return err
	}
	s := &e.sites[site-1]
	s.Delay, s.Loss = delay, loss
	e.log.Info("wanemu: link set", zap.String("site", s.Name), zap.Duration("delay", delay), zap.Float64("loss", loss))
	return nil
}

// SetDown takes site's link down (nothing passes between the site and the others; what
// its pairs hold is dropped) or up again.
func (e *Emulator) SetDown(site int, down bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.checkSite(site); err != nil {
		return err
	}
	s := &e.sites[site-1]
	s.Down = down
	if down {
		n := len(e.sites)
		for j := range n {
			for _, i := range []int{(site-1)*n + j, j*n + site - 1} {
				e.counts[i].Down += uint64(len(e.lines[i].q) - e.lines[i].head)
				e.held -= e.lines[i].drain()
			}
		}
	}
	e.log.Info("wanemu: link state", zap.String("site", s.Name), zap.Bool("down", down))
	return nil
}

func (e *Emulator) checkSite(site int) error {
	if site < 1 || site > len(e.sites) {
		return fmt.Errorf("%w: site %d (1 to %d)", ErrInvalid, site, len(e.sites))
	}
	return nil
}

// PairStats are the counters of the packets from one site to another.
type PairStats struct {
	From string `json:"from"`
	To   string `json:"to"`
	Counters
	Queued int `json:"queued_bytes"` // held now
}

// Stats is a snapshot of the emulator's counters and settings.
type Stats struct {
	Sites []Site      `json:"sites"`
	Pairs []PairStats `json:"pairs"` // pairs that saw packets
	Total Counters    `json:"total"`
	Other uint64      `json:"other"` // passed at once: within a site or not a site's
	// OtherWriteErr: of those, the packets the device refused to take back.
	OtherWriteErr uint64 `json:"other_write_err,omitempty"`
}

// Stats returns the counters and the sites' settings.
func (e *Emulator) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := Stats{Sites: append([]Site(nil), e.sites...), Other: e.other, OtherWriteErr: e.otherWriteErr}
	n := len(e.sites)
	for i, c := range e.counts {
		st.Total.add(c)
		if c != (Counters{}) || e.lines[i].bytes > 0 {
			st.Pairs = append(st.Pairs, PairStats{From: e.sites[i/n].Name, To: e.sites[i%n].Name, Counters: c, Queued: e.lines[i].bytes})
		}
	}
	return st
}
