package core

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/ipl"
)

// A receive port decides on incoming connections one at a time: the connection
// handler's GotConnection calls never overlap and each decision sees the ones before
// it, while no lock of the port is held across the handler (it may call the port, or
// close it). The tests call accept directly, as a transport does, so that they know
// where every decision is without depending on timing.

var (
	watchedOne = ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationData, ipl.ReceiveExplicit,
		ipl.CommunicationReliable, ipl.CommunicationFIFO, ipl.ConnectionUpcalls)
	watchedMany = ipl.MustPortType(ipl.ConnectionManyToOne, ipl.SerializationData, ipl.ReceiveExplicit,
		ipl.CommunicationReliable, ipl.CommunicationFIFO, ipl.ConnectionUpcalls)
)

// openAccepting opens an instance for the accept tests; its cleanup closes it and
// waits for every goroutine, handlers included.
func openAccepting(ctx context.Context, t *testing.T) *Instance {
	t.Helper()
	cfg := &ipl.Config{Pool: "accept", PortTypes: []ipl.PortType{watchedOne, watchedMany}, Logger: zap.NewNop(),
		ListenHost: "127.0.0.1", ConnectTimeout: 30 * time.Second, MaxMessageSize: 1 << 20}
	in, err := Open(ctx, cfg, "accept", &loopTransport{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := in.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := in.Wait(ctx); err != nil {
			t.Errorf("wait: %v", err)
		}
	})
	return in
}

// gotHook is a connection handler whose GotConnection runs got.
type gotHook func(rp ipl.ReceivePort, from ipl.SendPortIdentifier) bool

func (g gotHook) GotConnection(rp ipl.ReceivePort, from ipl.SendPortIdentifier) bool {
	return g(rp, from)
}
func (gotHook) LostConnection(ipl.ReceivePort, ipl.SendPortIdentifier, error) {}

type nopInConn struct{}

func (nopInConn) Close() error { return nil }

// request asks for a connection from the send port named from of in itself.
func request(in *Instance, pt ipl.PortType, from, to string) *Request {
	return &Request{From: ipl.SendPortIdentifier{Ibis: in.id, Name: from}, To: to, PortType: pt.String()}
}

// acceptAsync runs accept on a goroutine of its own, as a transport goroutine would.
func acceptAsync(p *ReceivePort, req *Request) <-chan ReplyCode {
	out := make(chan ReplyCode, 1)
	go func() {
		rep, _ := p.accept(req, nopInConn{})
		out <- rep.Code
	}()
	return out
}

func wantCode(ctx context.Context, t *testing.T, ch <-chan ReplyCode, want ReplyCode, what string) {
	t.Helper()
	select {
	case got := <-ch:
		if got != want {
			t.Errorf("%s: reply %v, want %v", what, got, want)
		}
	case <-ctx.Done():
		t.Fatalf("%s: no reply", what)
	}
}

// Two senders ask a one-to-one port at once while the handler is deciding on the
// first: the handler is called for the first only, the first is accepted and the
// second refused as one too many. The handler calls the port meanwhile (no lock held).
func TestAcceptDecidesInTurn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	in := openAccepting(ctx, t)
	var calls, inside, overlaps atomic.Int32
	entered, release := make(chan struct{}, 2), make(chan struct{})
	rp, err := in.CreateReceivePort(t.Context(), watchedOne, "one", ipl.WithConnectionHandler(gotHook(func(rp ipl.ReceivePort, _ ipl.SendPortIdentifier) bool {
		calls.Add(1)
		if inside.Add(1) > 1 {
			overlaps.Add(1)
		}
		defer inside.Add(-1)
		_ = rp.ConnectedTo()
		rp.EnableConnections()
		entered <- struct{}{}
		<-release
		return true
	})))
	if err != nil {
		t.Fatal(err)
	}
	p := rp.(*ReceivePort)
	first := acceptAsync(p, request(in, watchedOne, "s1", "one"))
	<-entered
	second := acceptAsync(p, request(in, watchedOne, "s2", "one"))
	close(release)
	wantCode(ctx, t, first, ReplyAccepted, "first sender")
	wantCode(ctx, t, second, ReplyNotManyToX, "second sender")
	if n := calls.Load(); n != 1 {
		t.Errorf("GotConnection called %d times, want once", n)
	}
	if n := overlaps.Load(); n != 0 {
		t.Errorf("GotConnection calls overlapped %d times", n)
	}
}

// A refusal by the handler refuses the sender and leaves no connection; a later
// request from it is asked again, and once accepted, the next is answered without the
// handler (already connected).
func TestAcceptRefusedThenAccepted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	in := openAccepting(ctx, t)
	var calls atomic.Int32
	rp, err := in.CreateReceivePort(t.Context(), watchedMany, "many", ipl.WithConnectionHandler(gotHook(func(ipl.ReceivePort, ipl.SendPortIdentifier) bool {
		return calls.Add(1) > 1 // no to the first call, yes after
	})))
	if err != nil {
		t.Fatal(err)
	}
	p := rp.(*ReceivePort)
	req := request(in, watchedMany, "s1", "many")
	wantCode(ctx, t, acceptAsync(p, req), ReplyDenied, "first request")
	if n := len(p.ConnectedTo()); n != 0 {
		t.Errorf("%d connections after a refusal, want none", n)
	}
	wantCode(ctx, t, acceptAsync(p, req), ReplyAccepted, "second request")
	wantCode(ctx, t, acceptAsync(p, req), ReplyAlreadyConnected, "third request")
	if n := calls.Load(); n != 2 {
		t.Errorf("GotConnection called %d times, want twice", n)
	}
}

// The handler closes its own port and says yes: the sender is told the port is gone,
// and so is a sender waiting for its turn meanwhile; no connection is made.
func TestAcceptHandlerClosesPort(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	in := openAccepting(ctx, t)
	entered, release := make(chan struct{}, 1), make(chan struct{})
	rp, err := in.CreateReceivePort(t.Context(), watchedMany, "many", ipl.WithConnectionHandler(gotHook(func(rp ipl.ReceivePort, _ ipl.SendPortIdentifier) bool {
		entered <- struct{}{}
		<-release
		_ = rp.Close()
		return true
	})))
	if err != nil {
		t.Fatal(err)
	}
	p := rp.(*ReceivePort)
	first := acceptAsync(p, request(in, watchedMany, "s1", "many"))
	<-entered
	second := acceptAsync(p, request(in, watchedMany, "s2", "many"))
	close(release)
	wantCode(ctx, t, first, ReplyNoSuchPort, "first sender")
	wantCode(ctx, t, second, ReplyNoSuchPort, "second sender")
	if n := len(p.ConnectedTo()); n != 0 {
		t.Errorf("%d connections on a closed port, want none", n)
	}
}

// The port closes from outside while the handler is still deciding: accept answers at
// once (the port is gone) instead of waiting for the handler, which ends on its own.
func TestAcceptPortClosedWhileAsking(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	in := openAccepting(ctx, t)
	entered, release := make(chan struct{}, 1), make(chan struct{})
	defer close(release) // before the cleanup's Wait
	rp, err := in.CreateReceivePort(t.Context(), watchedMany, "many", ipl.WithConnectionHandler(gotHook(func(ipl.ReceivePort, ipl.SendPortIdentifier) bool {
		entered <- struct{}{}
		<-release
		return true
	})))
	if err != nil {
		t.Fatal(err)
	}
	p := rp.(*ReceivePort)
	first := acceptAsync(p, request(in, watchedMany, "s1", "many"))
	<-entered
	second := acceptAsync(p, request(in, watchedMany, "s2", "many"))
	if err := rp.Close(); err != nil {
		t.Fatal(err)
	}
	wantCode(ctx, t, first, ReplyNoSuchPort, "sender whose handler still decides")
	wantCode(ctx, t, second, ReplyNoSuchPort, "sender waiting for its turn")
}
