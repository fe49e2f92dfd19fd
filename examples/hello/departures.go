package main

import (
	"context"
	"sync"

	"github.com/ibisgo/ibis/ipl"
)

// departures collects the members that left or died, from the registry's events, so that
// the server knows when its clients are gone.
type departures struct {
	mu   sync.Mutex
	left map[string]bool // member ID: true if it died
	wake chan struct{}   // a token after each change
}

func newDepartures() *departures {
	return &departures{left: map[string]bool{}, wake: make(chan struct{}, 1)}
}

// note records a Left or Died event; it never blocks the event handler.
func (d *departures) note(e ipl.Event) {
	d.mu.Lock()
	d.left[e.Member.ID] = e.Type == ipl.EventDied
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// wait returns once n members other than me have gone, with those that died, or when ctx
// ends.
func (d *departures) wait(ctx context.Context, me ipl.IbisIdentifier, n int) (died []string, err error) {
	for {
		d.mu.Lock()
		count := 0
		died = died[:0]
		for id, dead := range d.left {
			if id == me.ID {
				continue
			}
			count++
			if dead {
				died = append(died, "member "+id)
			}
		}
		d.mu.Unlock()
		if count >= n {
			return died, nil
		}
		select {
		case <-d.wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
