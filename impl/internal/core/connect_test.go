package core

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/wake"
	"github.com/ibisgo/ibis/ipl"
)

// Connect waits for a receive port without holding its send port: messages to the
// receivers already connected go on meanwhile, concurrent Connects to one port make one
// connection, and a connection that comes after its port closed is ended cleanly. The
// transport's hooks tell the tests exactly where a Connect is, so that nothing depends
// on timing.

// hookTransport is a loopTransport (real sockets on 127.0.0.1) whose Dial reports each
// attempt and may be held once the receiver has answered.
type hookTransport struct {
	*loopTransport
	before func(req *Request)             // called as a dial starts
	after  func(req *Request, rep *Reply) // called once the receiver answered
}

func (h *hookTransport) Dial(ctx context.Context, addr string, req *Request, lost func(error)) (OutConn, *Reply, error) {
	if h.before != nil {
		h.before(req)
	}
	c, rep, err := h.loopTransport.Dial(ctx, addr, req, lost)
	if h.after != nil && err == nil {
		h.after(req, rep)
	}
	return c, rep, err
}

var multiType = ipl.MustPortType(ipl.ConnectionOneToMany, ipl.SerializationData, ipl.ReceiveExplicit,
	ipl.CommunicationReliable, ipl.CommunicationFIFO, ipl.ConnectionUpcalls)

// gatherType's receive ports are read by a goroutine of their own (not by Receive: see
// deliver_direct.go), so that they notice a sender leaving while nobody receives.
var gatherType = ipl.MustPortType(ipl.ConnectionManyToOne, ipl.SerializationData, ipl.ReceiveExplicit,
	ipl.CommunicationReliable, ipl.CommunicationFIFO, ipl.ConnectionUpcalls)

var singleType = ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationData, ipl.ReceiveExplicit,
	ipl.CommunicationReliable, ipl.CommunicationFIFO)

func openHooked(ctx context.Context, t *testing.T, h *hookTransport) *Instance {
	t.Helper()
	h.loopTransport = &loopTransport{}
	cfg := &ipl.Config{Pool: "connect", PortTypes: []ipl.PortType{multiType, singleType, gatherType}, Logger: zap.NewNop(),
		ListenHost: "127.0.0.1", ConnectTimeout: 30 * time.Second, MaxMessageSize: 1 << 20}
	in, err := Open(ctx, cfg, "hooked", h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := in.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return in
}

// dialsTo returns a before-hook that signals on ch (without blocking) for every dial to
// the receive port named port.
func dialsTo(port string, ch chan<- struct{}) func(*Request) {
	return func(req *Request) {
		if req.To == port {
			wake.Poke(ch)
		}
	}
}

func sendInt(ctx context.Context, sp ipl.SendPort, v int64) error {
	m, err := sp.NewMessage(ctx)
	if err != nil {
		return err
	}
	if err := m.WriteInt64(v); err != nil {
		return err
	}
	_, err = m.Finish()
	return err
}

func receiveInt(ctx context.Context, t *testing.T, rp ipl.ReceivePort, want int64) {
	t.Helper()
	m, err := rp.Receive(ctx)
	if err != nil {
		t.Fatalf("receive %d: %v", want, err)
	}
	v, err := m.ReadInt64()
	if _, ferr := m.Finish(); err != nil || ferr != nil || v != want {
		t.Fatalf("received %d (%v, %v), want %d", v, err, ferr, want)
	}
}

func TestConnectDoesNotHoldThePortWhileRetrying(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the instance's own cleanup
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dialing := make(chan struct{}, 1)
	in := openHooked(ctx, t, &hookTransport{before: dialsTo("late", dialing)})
	early, err := in.CreateReceivePort(ctx, multiType, "early")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := in.CreateSendPort(multiType, "mc")
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Connect(ctx, in.Identifier(), "early"); err != nil {
		t.Fatal(err)
	}
	connected := make(chan error, 1)
	go func() { connected <- sp.Connect(ctx, in.Identifier(), "late") }()
	// Two attempts: the first was answered "no such port", so the Connect is retrying.
	for range 2 {
		select {
		case <-dialing:
		case <-ctx.Done():
			t.Fatal("the Connect to the missing port never dialled")
		}
	}
	for v := range int64(5) {
		sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
		err := sendInt(sctx, sp, v)
		scancel()
		if err != nil {
			t.Fatalf("message %d while a Connect retries: %v", v, err)
		}
		receiveInt(ctx, t, early, v)
	}
	late, err := in.CreateReceivePort(ctx, multiType, "late")
	if err != nil {
		t.Fatal(err)
	}
	if err := <-connected; err != nil {
		t.Fatalf("connect once the port exists: %v", err)
	}
	if err := sendInt(ctx, sp, 99); err != nil {
		t.Fatal(err)
	}
	receiveInt(ctx, t, early, 99)
	receiveInt(ctx, t, late, 99)
}

// Two Connects to one port at once: one connects, the other is told it is already
// connected (the second waits for the first's outcome instead of dialling: the receiver
// would answer "already connected", which a Connect takes for "not yet"). On a port
// that takes one receiver, two Connects to different ports: one connects, the other
// gets ErrNotOneToMany.
func TestConcurrentConnects(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the instance's own cleanup
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dialing := make(chan struct{}, 1)
	in := openHooked(ctx, t, &hookTransport{before: dialsTo("late", dialing)})
	sp, _ := in.CreateSendPort(multiType, "mc")
	results := make(chan error, 2)
	for range 2 {
		go func() { results <- sp.Connect(ctx, in.Identifier(), "late") }()
	}
	<-dialing
	if _, err := in.CreateReceivePort(ctx, multiType, "late"); err != nil {
		t.Fatal(err)
	}
	wantOneEach(t, results, ipl.ErrAlreadyConnected)
	if got := sp.ConnectedTo(); len(got) != 1 {
		t.Errorf("ConnectedTo = %v, want one port", got)
	}

	one, _ := in.CreateSendPort(singleType, "one")
	for _, name := range []string{"a", "b"} {
		go func() { results <- one.Connect(ctx, in.Identifier(), name) }()
	}
	for _, name := range []string{"a", "b"} {
		if _, err := in.CreateReceivePort(ctx, singleType, name); err != nil {
			t.Fatal(err)
		}
	}
	wantOneEach(t, results, ipl.ErrNotOneToMany)
	if got := one.ConnectedTo(); len(got) != 1 {
		t.Errorf("one-to-one: ConnectedTo = %v, want one port", got)
	}
}

func wantOneEach(t *testing.T, results <-chan error, other error) {
	t.Helper()
	var ok, bad int
	for range 2 {
		switch err := <-results; {
		case err == nil:
			ok++
		case errors.Is(err, other):
			bad++
		default:
			t.Errorf("connect: %v", err)
		}
	}
	if ok != 1 || bad != 1 {
		t.Errorf("%d connected and %d failed with %v; want one each", ok, bad, other)
	}
}

type lostLog struct{ lost chan error }

func (l *lostLog) GotConnection(ipl.ReceivePort, ipl.SendPortIdentifier) bool { return true }
func (l *lostLog) LostConnection(_ ipl.ReceivePort, _ ipl.SendPortIdentifier, err error) {
	l.lost <- err
}

// A Connect whose handshake was accepted just as its port closed: the port's Close
// does not wait for it, and the connection is ended with a goodbye, so the receiver
// sees a clean disconnect rather than a lost connection.
func TestConnectAcceptedAfterCloseEndsCleanly(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the instance's own cleanup
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	accepted, release := make(chan struct{}), make(chan struct{})
	h := &hookTransport{after: func(req *Request, rep *Reply) {
		if req.To == "slow" && rep.Code == ReplyAccepted {
			close(accepted)
			<-release
		}
	}}
	in := openHooked(ctx, t, h)
	log := &lostLog{lost: make(chan error, 1)}
	rp, err := in.CreateReceivePort(ctx, gatherType, "slow", ipl.WithConnectionHandler(log))
	if err != nil {
		t.Fatal(err)
	}
	sp, _ := in.CreateSendPort(gatherType, "mc")
	connected := make(chan error, 1)
	go func() { connected <- sp.Connect(ctx, in.Identifier(), "slow") }()
	select {
	case <-accepted:
	case <-ctx.Done():
		t.Fatal("no handshake")
	}
	closed := make(chan error, 1)
	go func() { closed <- sp.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("close while a Connect is under way: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the port's Close waited for its Connect")
	}
	close(release)
	if err := <-connected; !errors.Is(err, ipl.ErrClosed) {
		t.Errorf("Connect of a port closed during its handshake: %v, want ErrClosed", err)
	}
	select {
	case err := <-log.lost:
		if err != nil {
			t.Errorf("the receiver saw %v, want a clean disconnect", err)
		}
	case <-ctx.Done():
		t.Fatal("the receiver never saw the connection end")
	}
	if got := rp.ConnectedTo(); len(got) != 0 {
		t.Errorf("the receiver still lists %v", got)
	}
}
