package core

import (
	"context"
	"errors"
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
	if _, err := rcv.CreateReceivePort(singleType, "in"); err != nil {
		t.Fatal(err)
	}
	want := strings.Split(rcv.id.Address, ",")
	for round, order := range [][]string{want, {want[2]}} {
		sp, err := snd.CreateSendPort(singleType, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := sp.Connect(ctx, rcv.Identifier(), "in"); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if got := sent.takeDialled(); strings.Join(got, ",") != strings.Join(order, ",") {
			t.Fatalf("round %d dialled %q, want %q", round, got, order)
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
	t.Log(msg)
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
