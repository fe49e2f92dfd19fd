//go:build linux

package registryha

import (
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ibisgo/ibis/internal/etcdtest"
	"github.com/ibisgo/ibis/registry"
)

// A front end that recorded a join in etcd and was killed before its answer
// left: the client tries the join again at the other front end, which gives
// it the member the first attempt made (the join's token), with the events
// it would have heard. The closed-world pool is not cheated of a place by a
// member nobody runs, and no one hears of a second member.
func TestJoinAnswerLostWithFrontEnd(t *testing.T) {
	needHA(t)
	cluster := etcdtest.StartCluster(t, 3)
	eps := cluster.Endpoints()
	a := startFrontEnd(t, "A", eps, shortTimeouts...)
	b := startFrontEnd(t, "B", eps, shortTimeouts...)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()

	first, err := registry.Join(ctx, b.addr, "lost-reply", registry.WithPoolSize(2))
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if err := first.Signal(ctx, "before"); err != nil {
		t.Fatal(err)
	}

	// The second member starts at A through a proxy that passes the pool
	// check and nothing after it, so the join is made but never answered;
	// A is killed once the first member has heard of the join. Join starts
	// each client of a process one front end further along the list: a
	// probe finds where the next one starts.
	px := newMute(t, a.addr)
	probe, err := registry.Join(ctx, px.addr()+","+b.addr, "probe")
	if err != nil {
		t.Fatal(err)
	}
	list := px.addr() + "," + b.addr
	if probe.Addr() == px.addr() {
		list = b.addr + "," + px.addr()
	}
	_ = probe.Close()
	px.armed.Store(true)
	joined := make(chan error, 1)
	var second *registry.Client
	go func() {
		var err error
		second, err = registry.Join(ctx, list, "lost-reply", registry.WithPoolSize(2))
		joined <- err
	}()
	var newcomer registry.Identifier
	for newcomer.IsZero() {
		select {
		case ev := <-first.Events():
			if ev.Type == registry.Joined && ev.Member != first.Identity() {
				newcomer = ev.Member
			}
		case <-ctx.Done():
			t.Fatal("the first member never heard of the second's join")
		}
	}
	a.kill()
	if err := <-joined; err != nil {
		t.Fatalf("the join whose answer was lost failed at the other front end: %v", err)
	}
	defer second.Close()
	if second.Identity() != newcomer || second.Addr() != b.addr {
		t.Fatalf("second member is %v at %s; the first heard of %v, want it at %s", second.Identity(), second.Addr(),
			newcomer, b.addr)
	}
	// It heard what a member answered at once would have: the first member,
	// its own join, the pool closing (its join completed the pool).
	var got []registry.EventType
	for len(got) < 3 {
		select {
		case ev := <-second.Events():
			got = append(got, ev.Type)
		case <-ctx.Done():
			t.Fatalf("second member heard only %v", got)
		}
	}
	if got[0] != registry.Joined || got[1] != registry.Joined || got[2] != registry.PoolClosed {
		t.Fatalf("second member heard %v, want Joined, Joined, PoolClosed", got)
	}
	if err := second.Signal(ctx, "after"); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case ev := <-first.Events():
			switch {
			case ev.Type == registry.Signal && ev.Name == "after":
				return
			case ev.Type == registry.Joined || ev.Type == registry.Died:
				t.Fatalf("the first member heard %v: the lost answer made a member of its own", ev)
			}
		case <-ctx.Done():
			t.Fatal("the first member never heard the second's signal")
		}
	}
}

// mute forwards connections to target; once armed, it drops what target
// sends after the pool check (its challenge and verdict): the join reply and
// the events never arrive.
type mute struct {
	ln    net.Listener
	armed atomic.Bool
	wg    sync.WaitGroup
}

func newMute(t *testing.T, target string) *mute {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &mute{ln: ln}
	t.Cleanup(func() { _ = ln.Close(); p.wg.Wait() })
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			armed := p.armed.Load()
			p.wg.Go(func() {
				_, _ = io.Copy(s, c)
				_ = s.Close()
				_ = c.Close()
			})
			p.wg.Go(func() {
				buf := make([]byte, 64<<10)
				for reads := 0; ; reads++ {
					n, err := s.Read(buf)
					if n > 0 && (!armed || reads < 2) {
						if _, werr := c.Write(buf[:n]); werr != nil {
							break
						}
					}
					if err != nil {
						break
					}
				}
				_ = s.Close()
				_ = c.Close()
			})
		}
	})
	return p
}

func (p *mute) addr() string { return p.ln.Addr().String() }
