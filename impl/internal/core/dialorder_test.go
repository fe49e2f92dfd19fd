package core

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/ipl"
)

// A peer may publish several addresses: Connect tries them in order, moves on past one
// that refuses or where another Ibis answers, remembers the one that worked, and when
// none does names every address tried, with a hint when one is loopback.

// listTransport is a loopTransport that publishes a list of addresses made around its
// real one, and records the addresses it dials.
type listTransport struct {
	*loopTransport
	publish func(real string) string
	mu      sync.Mutex
	dialled []string
}

func (l *listTransport) Start(acc Acceptor) (string, error) {
	a, err := l.loopTransport.Start(acc)
	if err != nil || l.publish == nil {
		return a, err
	}
	return l.publish(a), nil
}

func (l *listTransport) Dial(ctx context.Context, addr string, req *Request, lost func(error)) (OutConn, *Reply, error) {
	l.mu.Lock()
	l.dialled = append(l.dialled, addr)
	l.mu.Unlock()
	return l.loopTransport.Dial(ctx, addr, req, lost)
}

// takeDialled returns and forgets the addresses dialled so far.
func (l *listTransport) takeDialled() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	d := l.dialled
	l.dialled = nil
	return d
}

// refusingAddr returns a loopback address where nothing listens: a port the kernel
// gave a listener that is closed again.
func refusingAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := ln.Addr().String()
	_ = ln.Close()
	return a
}

func openList(ctx context.Context, t *testing.T, registry string, tr *listTransport) *Instance {
	t.Helper()
	tr.loopTransport = &loopTransport{}
	return openOver(ctx, t, registry, tr)
}

// openOver opens an instance over tr in the tests' pool, closed by the test's cleanup.
func openOver(ctx context.Context, t *testing.T, registry string, tr Transport) *Instance {
	t.Helper()
	cfg := &ipl.Config{Pool: "dialorder", Registry: registry, PortTypes: []ipl.PortType{singleType},
		Logger: zap.NewNop(), ListenHost: "127.0.0.1", ConnectTimeout: 30 * time.Second, MaxMessageSize: 1 << 20}
	in, err := Open(ctx, cfg, "list", tr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close() })
	return in
}

func TestDialInOrder(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	other := openList(ctx, t, "", &listTransport{}) // an Ibis at an address of the list
	reg := other.embedded.Addr()
	refused := refusingAddr(t)
	rcv := openList(ctx, t, reg, &listTransport{publish: func(real string) string {
		return refused + "," + other.id.Address + "," + real
	}})
	sent := &listTransport{}
	snd := openList(ctx, t, reg, sent)
	want := strings.Split(rcv.id.Address, ",")
	for round, order := range [][]string{want, {want[2]}} {
		// A port per round: a one-to-one port takes the next sender only once it has
		// seen the last one go.
		port := fmt.Sprintf("in%d", round)
		if _, err := rcv.CreateReceivePort(ctx, singleType, port); err != nil {
			t.Fatal(err)
		}
		sp, err := snd.CreateSendPort(singleType, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := sp.Connect(ctx, rcv.Identifier(), port); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		// Further dials after the first pass (the port's "not yet", retried) go to the
		// address that answered.
		got := sent.takeDialled()
		ok := len(got) >= len(order) && strings.Join(got[:len(order)], ",") == strings.Join(order, ",")
		for _, a := range got[min(len(order), len(got)):] {
			ok = ok && a == want[2]
		}
		if !ok {
			t.Fatalf("round %d dialled %q, want %q (then only %s)", round, got, order, want[2])
		}
		if err := sp.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDialErrorNamesEveryAddress(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	first := openList(ctx, t, "", &listTransport{})
	a, b := refusingAddr(t), refusingAddr(t)
	rcv := openList(ctx, t, first.embedded.Addr(), &listTransport{publish: func(string) string { return a + "," + b }})
	sp, err := first.CreateSendPort(singleType, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	err = sp.Connect(ctx, rcv.Identifier(), "in")
	var de *DialError
	if !errors.Is(err, ipl.ErrRefused) || !errors.As(err, &de) || len(de.Tried) != 2 {
		t.Fatalf("connect to unreachable addresses: %v; want a DialError of 2 attempts matching ErrRefused", err)
	}
	msg := err.Error()
	for _, s := range []string{a, b, "connection refused", "IBIS_HOST", "loopback"} {
		if !strings.Contains(msg, s) {
			t.Errorf("the error does not say %q: %s", s, msg)
		}
	}
}

// One attempt of several gets a share of the time left, at least attemptFloor; the last
// gets all of it.
func TestAttemptShare(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, c1, share := attemptContext(ctx, 3)
	defer c1()
	if share > 21*time.Second || share < 15*time.Second {
		t.Errorf("first of 3 addresses in a minute gets %v, want about 20s", share)
	}
	short, c2 := context.WithTimeout(ctx, time.Second)
	defer c2()
	_, c3, share := attemptContext(short, 4)
	defer c3()
	if share != attemptFloor {
		t.Errorf("first of 4 addresses in a second gets %v, want the floor %v", share, attemptFloor)
	}
	last, c4, _ := attemptContext(ctx, 1)
	defer c4()
	if dl, _ := last.Deadline(); !dl.Equal(func() time.Time { d, _ := ctx.Deadline(); return d }()) {
		t.Errorf("the last address does not get all the time left")
	}
}

// holeTransport is a listTransport whose dials to hole never connect: they wait until
// their context ends, as a dial to an address that swallows packets does.
type holeTransport struct {
	*listTransport
	hole string
}

func (h *holeTransport) Dial(ctx context.Context, addr string, req *Request, lost func(error)) (OutConn, *Reply, error) {
	if addr != h.hole {
		return h.listTransport.Dial(ctx, addr, req, lost)
	}
	<-ctx.Done()
	return nil, nil, ctx.Err()
}

// An address that never answers costs its share of the Connect's time, not all of it:
// the next address is tried within the same Connect (8 s here: 4 s each), and the error
// of a Connect that found no address names the silent one with the time it got.
func TestSilentAddressBounded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	first := openList(ctx, t, "", &listTransport{})
	hole := "192.0.2.1:9" // never dialled: holeTransport swallows it
	rcv := openList(ctx, t, first.embedded.Addr(), &listTransport{publish: func(real string) string { return hole + "," + real }})
	if _, err := rcv.CreateReceivePort(ctx, singleType, "in"); err != nil {
		t.Fatal(err)
	}
	sent := &holeTransport{listTransport: &listTransport{}, hole: hole}
	sent.loopTransport = &loopTransport{}
	snd := openOver(ctx, t, first.embedded.Addr(), sent)
	sp, err := snd.CreateSendPort(singleType, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	// Half of 8 s for the silent address, the rest for the one that answers.
	cctx, ccancel := context.WithTimeout(ctx, 8*time.Second)
	defer ccancel()
	if err := sp.Connect(cctx, rcv.Identifier(), "in"); err != nil {
		t.Fatalf("connect past a silent address: %v", err)
	}
	live := rcv.id.Address[strings.Index(rcv.id.Address, ",")+1:]
	for _, a := range sent.takeDialled() { // the silent address is not recorded
		if a != live {
			t.Fatalf("dialled %s, want only %s after the silent address", a, live)
		}
	}

	// A silent and a refusing address: the error names the silent one and its share.
	refused := refusingAddr(t)
	rcv2 := openList(ctx, t, first.embedded.Addr(), &listTransport{publish: func(string) string { return hole + "," + refused }})
	sp2, err := snd.CreateSendPort(singleType, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sp2.Close()
	dctx, dcancel := context.WithTimeout(ctx, 8*time.Second)
	defer dcancel()
	err = sp2.Connect(dctx, rcv2.Identifier(), "in")
	if !errors.Is(err, ipl.ErrRefused) || !strings.Contains(err.Error(), hole+": no answer within") ||
		!strings.Contains(err.Error(), refused) {
		t.Fatalf("connect to a silent and a refusing address: %v; want ErrRefused naming %s as silent", err, hole)
	}
}

// refusingTransport is a listTransport whose dials to one address fail the way a
// failed pool check does in impl/internal/sockets: after the connection was made.
type refusingTransport struct {
	*listTransport
	at string
}

func (r *refusingTransport) Dial(ctx context.Context, addr string, req *Request, lost func(error)) (OutConn, *Reply, error) {
	if addr == r.at {
		r.mu.Lock()
		r.dialled = append(r.dialled, addr)
		r.mu.Unlock()
		return nil, nil, fmt.Errorf("test: pool check with %s: %w", addr, ipl.ErrUnauthenticated)
	}
	return r.listTransport.Dial(ctx, addr, req, lost)
}

// A failed pool check is an answer, not a failure to connect: Connect does not move on
// to the next address but fails with ErrUnauthenticated.
func TestPoolCheckFailureDoesNotMoveOn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	first := openList(ctx, t, "", &listTransport{})
	guarded := refusingAddr(t) // never dialled: refusingTransport answers for it
	rcv := openList(ctx, t, first.embedded.Addr(), &listTransport{publish: func(real string) string {
		return guarded + "," + real
	}})
	if _, err := rcv.CreateReceivePort(ctx, singleType, "in"); err != nil {
		t.Fatal(err)
	}
	sent := &refusingTransport{listTransport: &listTransport{loopTransport: &loopTransport{}}, at: guarded}
	snd := openOver(ctx, t, first.embedded.Addr(), sent)
	sp, err := snd.CreateSendPort(singleType, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	err = sp.Connect(ctx, rcv.Identifier(), "in")
	if !errors.Is(err, ipl.ErrUnauthenticated) {
		t.Fatalf("connect via an address whose pool check fails: %v, want ErrUnauthenticated", err)
	}
	if got := sent.takeDialled(); len(got) != 1 || got[0] != guarded {
		t.Fatalf("dialled %q, want only %s", got, guarded)
	}
}
