package nio

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/panjf2000/gnet/v2"
	"go.uber.org/zap"
)

// endpoint is what the event loop calls for a connection it serves.
type endpoint interface {
	// opened is called on the event loop once the connection is registered; a
	// connection gnet failed to register never gets it.
	opened(c gnet.Conn)
	// isOpen reports whether opened has run (and closed not yet).
	isOpen() bool
	// traffic is called on the event loop when bytes arrived.
	traffic(c gnet.Conn) gnet.Action
	// closed is called on the event loop when the connection c ended; err is nil for
	// a plain close.
	closed(c gnet.Conn, err error)
}

// engine is one gnet client engine: the event loops that serve the connections enrolled
// in it. An instance has one for its nonblocking ports and, once a thread-flavour port
// needs it, one with a single event loop for those.
type engine struct {
	name string
	cli  *gnet.Client
	hk   *hooks         // nil but in tests
	wait sync.WaitGroup // the waits for a full socket (descriptor.go); stop waits for them

	// mu guards stopped and the additions to busy. Lock order: inbound.enrolMu before
	// mu; mu is a leaf, released before EnrollContext waits for the event loop.
	mu      sync.Mutex
	stopped bool
	busy    sync.WaitGroup // enrolments under way; Stop waits for them

	// spin is how long a loop polls after traffic (loopspin.go), 0 for never; spins
	// holds each loop's state, made when first asked for, nil once the engine stopped.
	spin   time.Duration
	spinMu sync.Mutex // a leaf
	spins  map[gnet.EventLoop]*loopSpin
}

// handler routes gnet's events to the connections' endpoints.
type handler struct {
	gnet.BuiltinEventEngine
}

func (*handler) OnTraffic(c gnet.Conn) gnet.Action {
	if ep, ok := c.Context().(endpoint); ok {
		return ep.traffic(c)
	}
	return gnet.Close
}

func (*handler) OnOpen(c gnet.Conn) ([]byte, gnet.Action) {
	if ep, ok := c.Context().(endpoint); ok {
		ep.opened(c)
	}
	return nil, gnet.None
}

func (*handler) OnClose(c gnet.Conn, err error) gnet.Action {
	if ep, ok := c.Context().(endpoint); ok {
		ep.closed(c, err)
	}
	return gnet.None
}

// readBufferCap is what gnet reads from a connection per readable event (its default);
// a read that fills it suggests more waits, which the inbox then reads itself.
const readBufferCap = 64 << 10

func newEngine(name string, loops int, spin time.Duration, log *zap.Logger, hk *hooks) (*engine, error) {
	opts := []gnet.Option{
		gnet.WithLogger(zapLogger{log.Sugar()}),
		gnet.WithNumEventLoop(loops),
		gnet.WithTCPNoDelay(gnet.TCPNoDelay),
		gnet.WithReadBufferCap(readBufferCap),
		// Level-triggered I/O (gnet's default; never WithEdgeTriggeredIO): the inbox's
		// own reads (descriptor.go) may leave bytes in the socket and rely on the poller to
		// call OnTraffic again for them.
	}
	cli, err := gnet.NewClient(&handler{}, opts...)
	if err != nil {
		return nil, fmt.Errorf("nio: creating the %s engine: %w", name, err)
	}
	if err := cli.Start(); err != nil {
		return nil, fmt.Errorf("nio: starting the %s engine: %w", name, err)
	}
	return &engine{name: name, cli: cli, hk: hk, spin: spin, spins: map[gnet.EventLoop]*loopSpin{}}, nil
}

// spinOf returns the polling state of the loop el, nil when loops do not poll (or its
// epoll set could not be made: the loop then blocks as gnet's loops do).
func (e *engine) spinOf(el gnet.EventLoop) *loopSpin {
	if e.spin <= 0 {
		return nil
	}
	e.spinMu.Lock()
	defer e.spinMu.Unlock()
	ls, ok := e.spins[el]
	if !ok && e.spins != nil {
		var err error
		if ls, err = newLoopSpin(e.spin); err != nil {
			ls = nil
		}
		e.spins[el] = ls
	}
	return ls
}

var errStopped = errors.New("nio: the event loop has stopped")

// enroll hands an established connection to the event loops; ep gets its events. The
// engine takes over the socket (it keeps a duplicate and closes nc).
func (e *engine) enroll(nc net.Conn, ep endpoint) (gnet.Conn, error) {
	e.mu.Lock()
	if e.stopped {
		e.mu.Unlock()
		_ = nc.Close()
		return nil, errStopped
	}
	e.busy.Add(1)
	e.mu.Unlock()
	defer e.busy.Done()
	gc, err := e.cli.EnrollContext(nc, ep)
	if err != nil {
		_ = nc.Close()
		return nil, fmt.Errorf("nio: handing the connection to the %s event loop: %w", e.name, err)
	}
	if !ep.isOpen() {
		// gnet could not register the socket (epoll refused it): it closed its
		// duplicate and will never report on the connection.
		return nil, fmt.Errorf("nio: the %s event loop could not register the connection", e.name)
	}
	return gc, nil
}

// stop closes every connection of the engine (their endpoints see closed) and waits for
// the event loops to end, and then for the waits of full sockets, which those closes
// ended.
func (e *engine) stop() error {
	e.mu.Lock()
	if e.stopped {
		e.mu.Unlock()
		return nil
	}
	e.stopped = true
	e.mu.Unlock()
	e.busy.Wait()
	err := e.cli.Stop()
	e.wait.Wait()
	e.spinMu.Lock()
	for _, ls := range e.spins {
		if ls != nil {
			ls.close()
		}
	}
	e.spins = nil // no more: the loops have ended
	e.spinMu.Unlock()
	return err
}

// zapLogger sends gnet's logging to the instance's zap logger, never to stdout.
type zapLogger struct{ s *zap.SugaredLogger }

func (l zapLogger) Debugf(f string, a ...any) { l.s.Debugf(f, a...) }
func (l zapLogger) Infof(f string, a ...any)  { l.s.Debugf(f, a...) }
func (l zapLogger) Warnf(f string, a ...any)  { l.s.Warnf(f, a...) }
func (l zapLogger) Errorf(f string, a ...any) { l.s.Errorf(f, a...) }

// Fatalf is an error for us: a library must not end the program.
func (l zapLogger) Fatalf(f string, a ...any) { l.s.Errorf(f, a...) }
