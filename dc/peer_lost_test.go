package dc

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"

	_ "github.com/ibisgo/ibis/impl/tcp"
)

// TestLostPeerEndsSend: a send in progress to a process that the registry then reports
// gone ends at once, whatever its timeout. A send held a peer's lock for its whole
// timeout before: on mp, a connect to a process that has closed its Ibis waits for an
// answer that never comes, so a dispatcher replying to a thief that had just left was
// stuck for the send timeout (60 s), did not take the root's end meanwhile, and ended
// with ErrRunEnded when the root, its statistics missing, terminated the run. Here the
// send connects to a member without a dc port, which waits for the port to appear.
func TestLostPeerEndsSend(t *testing.T) {
	srv, err := registry.StartEmbedded("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	join := func() ipl.Ibis {
		ib, err := ipl.New(ctx, append(IbisOptions(), ipl.WithImplementation("tcp"), ipl.WithRegistry(srv.Addr()), ipl.WithPool(t.Name()))...)
		if err != nil {
			t.Fatal(err)
		}
		return ib
	}
	ib := join()
	defer func() { _ = ib.Close() }()
	portless := join() // a member that has not created its dc port
	defer func() { _ = portless.Close() }()
	rt, err := New(ctx, ib, WithSendTimeout(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rt.Close() }()

	done := make(chan error, 1)
	go func() { done <- rt.send(portless.Identifier(), &header{typ: msgProbe}, nil) }()
	// Wait until the send holds the peer: it is connecting.
	for {
		rt.mu.Lock()
		p := rt.peers[portless.Identifier().ID]
		rt.mu.Unlock()
		if p != nil && !p.mu.TryLock() {
			break
		}
		if p != nil {
			p.mu.Unlock()
		}
		select {
		case err := <-done:
			t.Fatalf("the send to a member without a dc port ended before it was reported gone: %v", err)
		case <-ctx.Done():
			t.Fatal("the send never started")
		case <-time.After(time.Millisecond):
		}
	}
	rt.lost(portless.Identifier(), ipl.EventLeft)
	select {
	case err := <-done:
		if !errors.Is(err, errPeerGone) {
			t.Errorf("the send ended with %v, want errPeerGone", err)
		}
	case <-ctx.Done():
		t.Fatal("the send to a process reported gone did not end (it waits for its timeout of an hour)")
	}
}
