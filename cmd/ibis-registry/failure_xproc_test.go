package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	_ "github.com/ibisgo/ibis/impl/nio"
	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

// The failure detector across real processes: ibis-registry runs in a
// child process (startRegistry), members run in this test process and in
// children of it (runMember), and the faults are real signals: SIGSTOP
// and SIGCONT as a paused virtual machine, swapping or an overloaded node
// would stop a process. The sleeps below are the length of a fault, never
// a wait for its effect: the tests wait for events.

// memberEnv makes the test binary a pool member (runMember) of the kind
// it names; the registry, the pool and the implementation come from
// IBIS_REGISTRY, IBIS_POOL and IBIS_IMPL.
const memberEnv = "IBIS_REGISTRY_CMD_TEST_MEMBER"

// Member kinds.
const (
	memberIdle   = "idle"   // waits for the pool's end
	memberHog    = "hog"    // waits too, with every CPU kept busy by loops that never yield
	memberSender = "sender" // streams numbered messages to the global port "inbox" until the pool ends
	memberJoin   = "join"   // only joins, and says how that went
)

// Exit statuses of a member.
const (
	memberTerminated = 0 // the pool was terminated, the member left cleanly
	memberFailed     = 2 // something went wrong: stderr says what
	memberEnded      = 3 // its instance ended by itself (Done) before the pool did
)

// runMember is the body of a member process. It says on stdout that it
// joined, every Died, RegistryLost and RegistryRestored event it hears,
// every signal, and how it ends; diagnostics from Ibis go to stderr.
func runMember(kind string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	log := zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig()),
		zapcore.Lock(os.Stderr), zapcore.WarnLevel))
	var out sync.Mutex
	say := func(format string, args ...any) {
		out.Lock()
		defer out.Unlock()
		fmt.Printf(format+"\n", args...)
	}
	ib, err := ipl.New(ctx, ipl.WithListenHost("127.0.0.1"), ipl.WithPortTypes(inboxType),
		ipl.WithTag(kind), ipl.WithLogger(log), ipl.WithEventHandler(func(ev ipl.Event) {
			switch ev.Type {
			case ipl.EventDied, ipl.EventRegistryLost, ipl.EventRegistryRestored:
				say("event %v %v %s", ev.Type, ev.Member, ev.Name)
			case ipl.EventSignal:
				say("signal %s", ev.Name)
			}
		}))
	if err != nil {
		fmt.Fprintln(os.Stderr, "member:", err)
		return memberFailed
	}
	defer func() { _ = ib.Close() }()
	say("joined %v", ib.Identifier())
	if kind == memberJoin {
		return memberTerminated
	}
	terminated := make(chan error, 1)
	go func() { terminated <- ib.Registry().WaitUntilTerminated(ctx) }()
	switch kind {
	case memberHog:
		stop := make(chan struct{})
		defer close(stop)
		for range 2 * runtime.NumCPU() {
			go spin(stop)
		}
	case memberSender:
		sent, err := stream(ctx, ib, terminated)
		say("sent %d", sent)
		if err != nil {
			fmt.Fprintln(os.Stderr, "member:", err)
			return memberFailed
		}
		return memberTerminated
	}
	select {
	case err := <-terminated:
		if err == nil {
			say("terminated")
			return memberTerminated
		}
		fmt.Fprintln(os.Stderr, "member:", err)
		select { // the instance may be ending by itself, which failed the wait
		case <-ib.Done():
		case <-time.After(time.Minute):
			return memberFailed
		}
	case <-ib.Done():
	}
	say("ended")
	return memberEnded
}

// spin keeps one CPU busy until stop closes, in a loop without calls that
// could yield.
func spin(stop <-chan struct{}) {
	for x := uint64(1); ; x = x*6364136223846793005 + 1442695040888963407 {
		if x&(1<<20-1) == 0 {
			select {
			case <-stop:
				return
			default:
			}
		}
	}
}

// stream sends the numbers 0, 1, ... one per message to the global port
// "inbox" until the pool ends, and returns how many it sent.
func stream(ctx context.Context, ib ipl.Ibis, terminated <-chan error) (int64, error) {
	sp, err := ib.CreateSendPort(inboxType, "stream")
	if err != nil {
		return 0, err
	}
	defer sp.Close()
	if err := sp.ConnectGlobal(ctx, "inbox"); err != nil {
		return 0, err
	}
	var n int64
	for {
		select {
		case err := <-terminated:
			return n, err
		default:
		}
		m, err := sp.NewMessage(ctx)
		if err != nil {
			return n, err
		}
		if err := m.WriteInt64(n); err != nil {
			return n, err
		}
		if _, err := m.Finish(); err != nil {
			return n, fmt.Errorf("message %d: %w", n, err)
		}
		n++
		time.Sleep(time.Millisecond) // a steady stream, not a flood
	}
}

// memberProcess is a member running in a child process, with its stdout
// lines collected as they come.
type memberProcess struct {
	c     *selfexec.Child
	mu    sync.Mutex
	lines []string
	more  chan struct{} // poked on every line
}

// startMember runs a member of kind in pool at the registry addr, on the
// implementation impl, and waits until it has joined.
func startMember(t *testing.T, kind, impl, addr, pool string) *memberProcess {
	t.Helper()
	c, err := selfexec.Start(context.Background(), []string{selfexec.NoTests}, selfexec.WithStdoutPipe(),
		selfexec.WithEnv(memberEnv+"="+kind, ipl.EnvRegistry+"="+addr, ipl.EnvPool+"="+pool, ipl.EnvImpl+"="+impl))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	p := &memberProcess{c: c, more: make(chan struct{}, 1)}
	go func() {
		sc := bufio.NewScanner(c.StdoutPipe())
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			p.mu.Unlock()
			select {
			case p.more <- struct{}{}:
			default:
			}
		}
	}()
	p.waitLine(t, "joined ")
	return p
}

// waitLine waits for a line that begins with prefix and returns it.
func (p *memberProcess) waitLine(t *testing.T, prefix string) string {
	t.Helper()
	deadline := time.After(2 * time.Minute)
	for {
		p.mu.Lock()
		for _, l := range p.lines {
			if strings.HasPrefix(l, prefix) {
				p.mu.Unlock()
				return l
			}
		}
		p.mu.Unlock()
		select {
		case <-p.more:
		case <-p.c.Done():
			p.mu.Lock()
			lines := strings.Join(p.lines, "\n")
			p.mu.Unlock()
			if !strings.Contains(lines, prefix) {
				t.Fatalf("member exited without saying %q; stdout:\n%s\nstderr:\n%s", prefix, lines, p.c.Stderr())
			}
		case <-deadline:
			t.Fatalf("member did not say %q; stderr:\n%s", prefix, p.c.Stderr())
		}
	}
}

// said returns the member's lines that begin with prefix.
func (p *memberProcess) said(prefix string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, l := range p.lines {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

// wait waits for the member to exit and returns its exit status.
func (p *memberProcess) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.c.Done():
	case <-time.After(2 * time.Minute):
		t.Fatalf("member still runs; stderr:\n%s", p.c.Stderr())
	}
	return p.c.ExitCode()
}

// watcher is a member in this process that records the pool events that
// tell of trouble.
type watcher struct {
	ipl.Ibis
	mu     sync.Mutex
	bad    []ipl.Event // Died, RegistryLost
	died   map[string]chan struct{}
	joined chan ipl.IbisIdentifier
}

func newWatcher(t *testing.T, ctx context.Context, impl, addr, pool string) *watcher {
	t.Helper()
	w := &watcher{died: map[string]chan struct{}{}, joined: make(chan ipl.IbisIdentifier, 16)}
	ib, err := ipl.New(ctx, ipl.WithRegistry(addr), ipl.WithPool(pool), ipl.WithImplementation(impl),
		ipl.WithListenHost("127.0.0.1"), ipl.WithPortTypes(inboxType), ipl.WithTag("watcher"),
		ipl.WithEventHandler(func(ev ipl.Event) {
			w.mu.Lock()
			defer w.mu.Unlock()
			switch ev.Type {
			case ipl.EventJoined:
				select {
				case w.joined <- ev.Member:
				default:
				}
			case ipl.EventDied, ipl.EventRegistryLost:
				w.bad = append(w.bad, ev)
				if ev.Type == ipl.EventDied {
					w.diedCh(ev.Member.ID)
					close(w.died[ev.Member.ID])
				}
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ib.Close(); err != nil {
			t.Errorf("close the watcher: %v", err)
		}
	})
	w.Ibis = ib
	return w
}

// diedCh returns the channel closed when member id is reported dead.
// Called with w.mu held.
func (w *watcher) diedCh(id string) chan struct{} {
	ch, ok := w.died[id]
	if !ok {
		ch = make(chan struct{})
		w.died[id] = ch
	}
	return ch
}

// trouble returns the Died and RegistryLost events heard so far.
func (w *watcher) trouble() []ipl.Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]ipl.Event(nil), w.bad...)
}

// memberOf returns the identifier of the member a child process said it
// joined as ("joined pool/3@..." gives "3").
func memberOf(t *testing.T, line string) string {
	t.Helper()
	id := strings.TrimPrefix(line, "joined ")
	_, rest, ok := strings.Cut(id, "/")
	num, _, ok2 := strings.Cut(rest, "@")
	if !ok || !ok2 {
		t.Fatalf("cannot read a member from %q", line)
	}
	return num
}

// stopFor stops a process with SIGSTOP for d, then lets it go on.
func stopFor(t *testing.T, c *selfexec.Child, d time.Duration) {
	t.Helper()
	if err := c.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(d)
	if err := c.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
}

// TestRegistryPauseKillsNobody stops the registry process (SIGSTOP) for 4
// and then 8 seconds while a member process streams messages to a member
// in this process. Both pauses are longer than the old limit of 1.5
// heartbeat intervals, and the second one is longer than the death
// timeout itself (5s here): the registry must not blame the members for
// its own pause, nobody is declared dead or loses the registry, and every
// message arrives, in order. On tcp and on nio.
func TestRegistryPauseKillsNobody(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for _, impl := range []string{"tcp", "nio"} {
		t.Run(impl, func(t *testing.T) { registryPause(t, impl) })
	}
}

func registryPause(t *testing.T, impl string) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	reg := startRegistry(t, "-host", "127.0.0.1", "-port", "0", "-heartbeat", "500ms", "-death-timeout", "5s")
	w := newWatcher(t, ctx, impl, reg.addr, "pause")
	inbox, err := w.CreateReceivePort(ctx, inboxType, "inbox", ipl.Global())
	if err != nil {
		t.Fatal(err)
	}
	var received atomic.Int64
	recvErr := make(chan error, 1)
	go func() {
		for {
			m, err := inbox.Receive(ctx)
			if err != nil {
				if errors.Is(err, ipl.ErrClosed) {
					err = nil
				}
				recvErr <- err
				return
			}
			v, err := m.ReadInt64()
			if _, ferr := m.Finish(); err == nil {
				err = ferr
			}
			if want := received.Load(); err != nil || v != want {
				recvErr <- fmt.Errorf("message %d: got %d, %v", want, v, err)
				return
			}
			received.Add(1)
		}
	}()
	sender := startMember(t, memberSender, impl, reg.addr, "pause")
	flowing := func(what string) {
		t.Helper()
		target := received.Load() + 100
		for received.Load() < target {
			select {
			case err := <-recvErr:
				t.Fatalf("receiving %s: %v", what, err)
			case <-ctx.Done():
				t.Fatalf("the stream stopped %s at %d messages; registry stderr:\n%s", what, received.Load(), reg.c.Stderr())
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	flowing("before the pauses")
	stopFor(t, reg.c, 4*time.Second)
	flowing("after the 4s pause")
	stopFor(t, reg.c, 8*time.Second)
	flowing("after the 8s pause")
	// The registry answers again: the pool can end through it.
	if err := w.Registry().Terminate(ctx); err != nil {
		t.Fatalf("terminate after the pauses: %v", err)
	}
	var sent int64
	if _, err := fmt.Sscanf(sender.waitLine(t, "sent "), "sent %d", &sent); err != nil {
		t.Fatal(err)
	}
	if code := sender.wait(t); code != memberTerminated {
		t.Fatalf("sender exited %d; stderr:\n%s", code, sender.c.Stderr())
	}
	for received.Load() < sent {
		select {
		case err := <-recvErr:
			t.Fatalf("after %d of %d messages: %v", received.Load(), sent, err)
		case <-ctx.Done():
			t.Fatalf("%d of %d messages arrived", received.Load(), sent)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if bad := w.trouble(); len(bad) > 0 {
		t.Errorf("the receiving member heard %v", bad)
	}
	if bad := sender.said("event "); len(bad) > 0 {
		t.Errorf("the sending member heard %v", bad)
	}
	if !strings.Contains(reg.c.Stderr(), "did not run for a while") {
		t.Logf("the registry did not notice its own pause (its readers drained the heartbeats first); stderr:\n%s", reg.c.Stderr())
	}
	t.Logf("%d messages through pauses of the registry of 4s and 8s", sent)
}

// TestBusyStoppedMemberSurvives stops a member process whose every CPU is
// kept busy by loops (SIGSTOP, 10 seconds) at a registry with the default
// heartbeat interval and death timeout: it stays a member, and once it
// runs again it hears a signal and the end of the pool like any other.
func TestBusyStoppedMemberSurvives(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	reg := startRegistry(t, "-host", "127.0.0.1", "-port", "0")
	w := newWatcher(t, ctx, "tcp", reg.addr, "busy")
	hog := startMember(t, memberHog, "tcp", reg.addr, "busy")
	id := memberOf(t, hog.said("joined ")[0])
	stopFor(t, hog.c, 10*time.Second)
	var target ipl.IbisIdentifier
	for _, m := range w.Registry().Members() {
		if m.ID == id {
			target = m
		}
	}
	if target.ID == "" {
		t.Fatalf("the busy member %s is no member after its stop: %v", id, w.Registry().Members())
	}
	if err := w.Registry().Signal(ctx, "still-there", target); err != nil {
		t.Fatalf("signal the busy member: %v", err)
	}
	hog.waitLine(t, "signal still-there")
	if err := w.Registry().Terminate(ctx); err != nil {
		t.Fatal(err)
	}
	if code := hog.wait(t); code != memberTerminated {
		t.Fatalf("busy member exited %d; stdout %v; stderr:\n%s", code, hog.said(""), hog.c.Stderr())
	}
	if bad := w.trouble(); len(bad) > 0 {
		t.Errorf("the watcher heard %v", bad)
	}
	if bad := hog.said("event "); len(bad) > 0 {
		t.Errorf("the busy member heard %v", bad)
	}
}

// TestMemberStoppedPastDeathTimeoutEnds stops a member process (SIGSTOP)
// until the registry, with a death timeout of 2 seconds here, declares it
// dead and the others hear Died; then lets it run again. It must learn
// that it was declared dead and end by itself, saying so in its log and
// to its program (the last RegistryLost event, before Done closes).
func TestMemberStoppedPastDeathTimeoutEnds(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	reg := startRegistry(t, "-host", "127.0.0.1", "-port", "0", "-heartbeat", "250ms", "-death-timeout", "2s")
	w := newWatcher(t, ctx, "tcp", reg.addr, "stopped")
	m := startMember(t, memberIdle, "tcp", reg.addr, "stopped")
	id := memberOf(t, m.said("joined ")[0])
	w.mu.Lock()
	died := w.diedCh(id)
	w.mu.Unlock()
	if err := m.c.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-died:
	case <-ctx.Done():
		t.Fatalf("the stopped member was never declared dead; registry stderr:\n%s", reg.c.Stderr())
	}
	if err := m.c.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if code := m.wait(t); code != memberEnded {
		t.Fatalf("the resumed member exited %d, want %d (its instance ended); stdout %v; stderr:\n%s",
			code, memberEnded, m.said(""), m.c.Stderr())
	}
	if !strings.Contains(m.c.Stderr(), "declared this instance dead") {
		t.Errorf("the resumed member did not log that it was declared dead; stderr:\n%s", m.c.Stderr())
	}
	lost := m.said("event " + ipl.EventRegistryLost.String())
	if len(lost) != 1 || !strings.Contains(lost[0], registry.LostDeclaredDead) {
		t.Errorf("the resumed member's program heard %q, want one RegistryLost event saying %q", lost, registry.LostDeclaredDead)
	}
}

// TestUnreachableRegistryFails starts members whose registry is not there:
// nothing listens at the address, or its host name does not resolve. Each
// must give up by itself (Join's dial timeout, not the test's), naming the
// address and the cause.
func TestUnreachableRegistryFails(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	_ = ln.Close()
	for _, tc := range []struct{ addr, cause string }{
		{closed, "connection refused"},
		{"no-such-host.invalid:8888", "does not resolve"},
	} {
		t.Run(tc.cause, func(t *testing.T) {
			c, err := selfexec.Start(context.Background(), []string{selfexec.NoTests},
				selfexec.WithEnv(memberEnv+"="+memberJoin, ipl.EnvRegistry+"="+tc.addr, ipl.EnvPool+"=nowhere", ipl.EnvImpl+"=tcp"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			select {
			case <-c.Done():
			case <-time.After(2 * time.Minute):
				t.Fatalf("the member still waits for the registry at %s", tc.addr)
			}
			if code := c.ExitCode(); code != memberFailed {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, memberFailed, c.Stderr())
			}
			msg := c.Stderr()
			if !strings.Contains(msg, tc.addr) || !strings.Contains(msg, tc.cause) || !strings.Contains(msg, ipl.ErrRegistryLost.Error()) {
				t.Fatalf("the error does not name the address %s and the cause %q:\n%s", tc.addr, tc.cause, msg)
			}
			t.Logf("%s", strings.TrimSpace(msg))
		})
	}
}
