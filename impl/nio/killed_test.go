package nio

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

// A peer process killed with SIGKILL shows up as a lost connection on every flavour, in
// both directions. The peer is this test binary started again with envKilledChild set
// (TestMain hands over to runKilledChild); parent and child meet in a pool around an
// embedded registry on 127.0.0.1. No step waits for time to pass: each waits for a
// condition, bounded by the test's context.

// Environment of a child process: its role ("send": it connects send ports to the
// parent's receive ports; "receive": it opens receive ports the parent connects to), the
// ports (comma-separated) and where the pool is.
const (
	envKilledChild    = "IBIS_NIO_TEST_KILLED_CHILD"
	envKilledPorts    = "IBIS_NIO_TEST_KILLED_PORTS"
	envKilledRegistry = "IBIS_NIO_TEST_KILLED_REGISTRY"
	envKilledPool     = "IBIS_NIO_TEST_KILLED_POOL"
)

// The port types; the flavours are forced for the parent's ports by its properties.
var (
	killedOneToOne  = killedType(ipl.ConnectionOneToOne)
	killedManyToOne = killedType(ipl.ConnectionManyToOne)
	killedOneToMany = killedType(ipl.ConnectionOneToMany)
)

func killedType(kind string) ipl.PortType {
	return ipl.MustPortType(kind, ipl.SerializationData, ipl.ReceiveExplicit, ipl.CommunicationReliable,
		ipl.CommunicationFIFO, ipl.ConnectionUpcalls, ipl.ConnectionDowncalls)
}

// killedPortType maps a port name ("idle-11", "busy-m1", ...) to its type: the suffix
// says the connection kind.
func killedPortType(name string) ipl.PortType {
	switch {
	case strings.HasSuffix(name, "-m1"):
		return killedManyToOne
	case strings.HasSuffix(name, "-1m"):
		return killedOneToMany
	default:
		return killedOneToOne
	}
}

// The child's messages: "idle" ports get one whole message and then nothing; "busy"
// ports get one whole message and then the start of a second that never ends.
const (
	killedFirst   = 1
	killedPartial = 42
)

// runKilledChild plays the child's part until it is killed; it returns only on failure.
func runKilledChild() int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "killed-peer child: "+format+"\n", a...)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ib, err := ipl.New(ctx, ipl.WithImplementation(Name),
		ipl.WithPortTypes(killedOneToOne, killedManyToOne, killedOneToMany),
		ipl.WithRegistry(os.Getenv(envKilledRegistry)), ipl.WithPool(os.Getenv(envKilledPool)),
		ipl.WithPoolSize(2), ipl.WithTag("child"), ipl.WithListenHost("127.0.0.1"))
	if err != nil {
		return fail("%v", err)
	}
	defer ib.Close()
	if err := ib.Registry().WaitUntilPoolClosed(ctx); err != nil {
		return fail("waiting for the pool: %v", err)
	}
	var parent ipl.IbisIdentifier
	for _, m := range ib.Registry().Members() {
		if m.Tag == "parent" {
			parent = m
		}
	}
	if parent.ID == "" {
		return fail("no parent in the pool %v", ib.Registry().Members())
	}
	for _, name := range strings.Split(os.Getenv(envKilledPorts), ",") {
		pt := killedPortType(name)
		switch os.Getenv(envKilledChild) {
		case "receive":
			// Nothing is ever read: what the parent sends stays in the buffers.
			if _, err := ib.CreateReceivePort(ctx, pt, name); err != nil {
				return fail("%s: %v", name, err)
			}
		case "send":
			sp, err := ib.CreateSendPort(pt, "")
			if err != nil {
				return fail("%s: %v", name, err)
			}
			if err := sp.Connect(ctx, parent, name); err != nil {
				return fail("%s: connect: %v", name, err)
			}
			m, err := sp.NewMessage(ctx)
			if err != nil {
				return fail("%s: %v", name, err)
			}
			_ = m.WriteInt64(killedFirst)
			if _, err := m.Finish(); err != nil {
				return fail("%s: first message: %v", name, err)
			}
			if strings.HasPrefix(name, "busy") {
				if m, err = sp.NewMessage(ctx); err != nil {
					return fail("%s: %v", name, err)
				}
				_ = m.WriteInt64(killedPartial)
				if err := m.Send(); err != nil { // the message stays live
					return fail("%s: partial message: %v", name, err)
				}
			}
		default:
			return fail("unknown role %q", os.Getenv(envKilledChild))
		}
	}
	<-ctx.Done() // the parent kills us before this
	return fail("not killed: %v", ctx.Err())
}

// killedPair is the parent's side of a test: its Ibis and the child process.
type killedPair struct {
	t     *testing.T
	ib    ipl.Ibis
	child ipl.IbisIdentifier
	c     *selfexec.Child
}

// startKilledPair starts a registry, the parent's Ibis (with props), runs setup on it,
// starts a child of the given role serving ports, and waits until both are in the pool.
func startKilledPair(ctx context.Context, t *testing.T, role string, ports []string, props map[string]string,
	setup func(ib ipl.Ibis)) *killedPair {
	t.Helper()
	srv, err := registry.StartEmbedded("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	pool := fmt.Sprintf("killed-%s-%d", role, time.Now().UnixNano())
	opts := []ipl.Option{ipl.WithImplementation(Name),
		ipl.WithPortTypes(killedOneToOne, killedManyToOne, killedOneToMany),
		ipl.WithRegistry(srv.Addr()), ipl.WithPool(pool), ipl.WithPoolSize(2), ipl.WithTag("parent"),
		ipl.WithListenHost("127.0.0.1")}
	for k, v := range props {
		opts = append(opts, ipl.WithProperty(k, v))
	}
	ib, err := ipl.New(ctx, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ib.Close(); err != nil {
			t.Errorf("closing the parent's Ibis: %v", err)
		}
	})
	if setup != nil {
		setup(ib)
	}
	c, err := selfexec.Start(context.Background(), []string{selfexec.NoTests}, selfexec.WithCombinedOutput(),
		selfexec.WithEnv(envKilledChild+"="+role, envKilledPorts+"="+strings.Join(ports, ","),
			envKilledRegistry+"="+srv.Addr(), envKilledPool+"="+pool))
	if err != nil {
		t.Fatal(err)
	}
	p := &killedPair{t: t, ib: ib, c: c}
	t.Cleanup(func() {
		c.Close()
		if t.Failed() {
			t.Logf("the child's output:\n%s", c.Output())
		}
	})
	if err := ib.Registry().WaitUntilPoolClosed(ctx); err != nil {
		t.Fatalf("waiting for the child to join: %v", err)
	}
	for _, m := range ib.Registry().Members() {
		if m.Tag == "child" {
			p.child = m
		}
	}
	if p.child.ID == "" {
		t.Fatalf("no child in the pool: %v", ib.Registry().Members())
	}
	return p
}

// kill sends SIGKILL to the child and waits until it is gone; it fails the test when
// the child had already ended by itself (then it never played its part to the end).
func (p *killedPair) kill() {
	p.t.Helper()
	select {
	case <-p.c.Done():
		p.t.Fatalf("the child ended before it was killed: %v", p.c.Wait())
	default:
	}
	if err := p.c.Signal(os.Kill); err != nil {
		p.t.Fatal(err)
	}
	_ = p.c.Wait()
	if ws, ok := p.c.ProcessState().Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		p.t.Fatalf("the child ended with %v, not by SIGKILL", p.c.ProcessState())
	}
}

// waitErr waits for an error on ch, bounded by ctx.
func waitErr(ctx context.Context, t *testing.T, what string, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		t.Fatalf("%s: nothing reported before the deadline", what)
		return nil
	}
}

// portLost records the LostConnection upcalls of one receive port.
type portLost struct{ lost chan error }

func (l portLost) GotConnection(ipl.ReceivePort, ipl.SendPortIdentifier) bool { return true }
func (l portLost) LostConnection(_ ipl.ReceivePort, _ ipl.SendPortIdentifier, err error) {
	l.lost <- err
}

// TestKilledSenderProcess: the child's send ports are connected to the parent's receive
// ports of each receive flavour, one idle and one with a message half sent; the child is
// then killed. The half-received message fails with ErrConnectionLost (its reads and
// its Finish), and every port reports the lost connection with ErrConnectionLost in its
// LostConnection upcall and its LostConnections downcall, with nobody receiving: the
// event-loop flavours see the socket end, and a blocking port, which reads its single
// connection only in Receive, looks at it when the registry reports the sender's
// instance dead. The port types are one-to-one for every flavour, and many-to-one too for the flavours that
// can serve it.
func TestKilledSenderProcess(t *testing.T) {
	for _, f := range []string{"blocking", "nonblocking", "thread"} {
		t.Run(f, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			ports := []string{"idle-11", "busy-11"}
			if f != "blocking" {
				ports = append(ports, "idle-m1", "busy-m1")
			}
			rps := map[string]ipl.ReceivePort{}
			recs := map[string]portLost{}
			p := startKilledPair(ctx, t, "send", ports, map[string]string{PropertyReceive: f}, func(ib ipl.Ibis) {
				for _, name := range ports {
					rec := portLost{lost: make(chan error, 4)}
					rp, err := ib.CreateReceivePort(ctx, killedPortType(name), name, ipl.WithConnectionHandler(rec))
					if err != nil {
						t.Fatal(err)
					}
					rps[name], recs[name] = rp, rec
				}
			})
			// Both messages of each port have arrived: each connection is up and the
			// busy ones are in the middle of a message.
			partial := map[string]ipl.ReadMessage{}
			for _, name := range ports {
				m, err := rps[name].Receive(ctx)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if v, err := m.ReadInt64(); v != killedFirst || err != nil {
					t.Fatalf("%s: first message read as %d, %v", name, v, err)
				}
				if _, err := m.Finish(); err != nil {
					t.Fatalf("%s: first message: %v", name, err)
				}
				// A many-to-one port does not hand out the start of a small
				// message (whole messages first: core.WholeMessageLimit).
				if strings.HasPrefix(name, "busy") && !strings.HasSuffix(name, "-m1") {
					if m, err = rps[name].Receive(ctx); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if v, err := m.ReadInt64(); v != killedPartial || err != nil {
						t.Fatalf("%s: second message read as %d, %v", name, v, err)
					}
					partial[name] = m
				}
			}
			p.kill()

			for _, name := range ports {
				if m := partial[name]; m != nil {
					// The rest of the message never comes.
					_, rerr := m.ReadInt64()
					if !errors.Is(rerr, ipl.ErrConnectionLost) {
						t.Errorf("%s: reading past what the dead sender sent: %v, want ErrConnectionLost", name, rerr)
					}
					if _, err := m.Finish(); !errors.Is(err, ipl.ErrConnectionLost) {
						t.Errorf("%s: Finish of the half-received message: %v, want ErrConnectionLost", name, err)
					}
				}
				err := waitErr(ctx, t, name+": LostConnection upcall", recs[name].lost)
				if !errors.Is(err, ipl.ErrConnectionLost) {
					t.Errorf("%s: lost connection reported as %v, want ErrConnectionLost", name, err)
				}
				if strings.HasSuffix(name, "-m1") {
					// The dead sender's unfinished message is never handed out.
					rctx, rcancel := context.WithTimeout(ctx, 100*time.Millisecond)
					if m, err := rps[name].Receive(rctx); err == nil {
						t.Errorf("%s: a message of the dead sender was handed out after its loss: %v", name, m.Origin())
					}
					rcancel()
				}
				if got := rps[name].ConnectedTo(); len(got) != 0 {
					t.Errorf("%s: still lists senders %v", name, got)
				}
				lost, err := rps[name].LostConnections()
				if err != nil || len(lost) != 1 || lost[0].Ibis != p.child {
					t.Errorf("%s: LostConnections = %v, %v; want the child's send port", name, lost, err)
				}
			}
		})
	}
}

// TestKilledReceiverProcess: the parent's send ports of each send flavour, one-to-one
// and one-to-many, are connected to receive ports of the child, which never reads; one
// port of each type is idle, the other is writing a message larger than every buffer on
// the way when the child is killed. The blocked message's Finish fails with
// ErrConnectionLost, every port's disconnect upcall reports ErrConnectionLost, and the
// ports are left without connections (NewMessage: ErrNotConnected).
func TestKilledReceiverProcess(t *testing.T) {
	big := make([]int64, 8<<20) // 64 MiB
	for _, f := range []string{"blocking", "nonblocking", "thread"} {
		t.Run(f, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			ports := []string{"idle-11", "busy-11", "idle-1m", "busy-1m"}
			p := startKilledPair(ctx, t, "receive", ports, map[string]string{PropertySend: f}, nil)
			sps := map[string]ipl.SendPort{}
			lost := map[string]chan error{}
			finished := map[string]chan error{}
			for _, name := range ports {
				ch := make(chan error, 4)
				sp, err := p.ib.CreateSendPort(killedPortType(name), "to-"+name,
					ipl.WithDisconnectHandler(func(_ ipl.SendPort, _ ipl.ReceivePortIdentifier, err error) { ch <- err }))
				if err != nil {
					t.Fatal(err)
				}
				sps[name], lost[name] = sp, ch
				if err := sp.Connect(ctx, p.child, name); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				m, err := sp.NewMessage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				_ = m.WriteInt64(killedFirst)
				if _, err := m.Finish(); err != nil {
					t.Fatalf("%s: first message: %v", name, err)
				}
				if strings.HasPrefix(name, "busy") {
					// Started here, so that it belongs to the connection whatever
					// happens first: the write or the kill.
					if m, err = sp.NewMessage(ctx); err != nil {
						t.Fatal(err)
					}
					done := make(chan error, 1)
					finished[name] = done
					go func() {
						werr := m.WriteArray(big)
						_, ferr := m.Finish()
						done <- errors.Join(werr, ferr)
					}()
				}
			}
			p.kill()
			for _, name := range ports {
				if done := finished[name]; done != nil {
					err := waitErr(ctx, t, name+": the message under way", done)
					if !errors.Is(err, ipl.ErrConnectionLost) {
						t.Errorf("%s: a message cut off by the receiver's death ended with %v, want ErrConnectionLost", name, err)
					}
				}
				err := waitErr(ctx, t, name+": disconnect upcall", lost[name])
				if !errors.Is(err, ipl.ErrConnectionLost) {
					t.Errorf("%s: lost connection reported as %v, want ErrConnectionLost", name, err)
				}
				sp := sps[name]
				if got := sp.ConnectedTo(); len(got) != 0 {
					t.Errorf("%s: still lists receivers %v", name, got)
				}
				if gone, err := sp.LostConnections(); err != nil || len(gone) != 1 || gone[0].Ibis != p.child {
					t.Errorf("%s: LostConnections = %v, %v; want the child's port", name, gone, err)
				}
				if _, err := sp.NewMessage(ctx); !errors.Is(err, ipl.ErrNotConnected) {
					t.Errorf("%s: NewMessage after the only receiver died: %v, want ErrNotConnected", name, err)
				}
			}
		})
	}
}
