package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	_ "github.com/ibisgo/ibis/impl/tcp"
	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

// registryProcess is ibis-registry running in a child process (this test
// binary running main()).
type registryProcess struct {
	c    *selfexec.Child
	addr string
}

// startRegistry runs ibis-registry with args in a child process and waits
// until it listens.
func startRegistry(t *testing.T, args ...string) *registryProcess {
	t.Helper()
	c, err := selfexec.Start(context.Background(), []string{selfexec.NoTests}, selfexec.WithStdoutPipe(),
		selfexec.WithEnv(childEnv+"=1", childArgsEnv+"="+strings.Join(args, " ")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	stdout := bufio.NewReader(c.StdoutPipe())
	line, err := stdout.ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "ibis-registry listening on ")
	if err != nil || !ok {
		t.Fatalf("first line %q, %v; stderr:\n%s", line, err, c.Stderr())
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }() // -events lines, should there be any; ends at Close
	return &registryProcess{c: c, addr: addr}
}

// kill sends SIGKILL and reaps the process.
func (p *registryProcess) kill() { p.c.Close() }

// waitIbisEvent skips events of ib until one of type typ (for which match,
// if given, holds) and returns it.
func waitIbisEvent(t *testing.T, ib ipl.Ibis, typ ipl.EventType, match func(ipl.Event) bool) ipl.Event {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case ev, ok := <-ib.Registry().Events():
			if !ok {
				t.Fatalf("%v: events closed while waiting for %v", ib.Identifier(), typ)
			}
			if ev.Type == typ && (match == nil || match(ev)) {
				return ev
			}
		case <-deadline:
			t.Fatalf("%v: no %v event", ib.Identifier(), typ)
		}
	}
}

// inboxType is the port type of the pool's global inbox: every member may
// send to it.
var inboxType = ipl.MustPortType(ipl.ConnectionManyToOne, ipl.SerializationData, ipl.ReceiveExplicit,
	ipl.CommunicationReliable, ipl.CommunicationFIFO)

// TestIbisSurvivesRegistryRestart runs ibis-registry in a child process,
// Ibis instances (tcp) in this one, and kills the registry with SIGKILL:
// the instances hear EventRegistryLost, registry calls fail with
// ErrRegistryLost, connected ports keep working. The registry restarts on
// the same port: the instances hear EventRegistryRestored, keep their
// identifiers, the election result and the global port name; a newcomer
// gets a fresh member number and finds the global port.
func TestIbisSurvivesRegistryRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	first := startRegistry(t, "-host", "127.0.0.1", "-port", "0", "-recovery-window", "0")
	addr := first.addr
	newIbis := func(tag string) ipl.Ibis {
		t.Helper()
		ib, err := ipl.New(ctx, ipl.WithRegistry(addr), ipl.WithPool("restart"), ipl.WithImplementation("tcp"),
			ipl.WithListenHost("127.0.0.1"), ipl.WithPortTypes(inboxType), ipl.WithTag(tag))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := ib.Close(); err != nil {
				t.Errorf("close %v: %v", ib.Identifier(), err)
			}
		})
		return ib
	}
	master, sender, late := newIbis("master"), newIbis("sender"), newIbis("late")
	all := []ipl.Ibis{master, sender, late}
	for _, ib := range all {
		waitIbisEvent(t, ib, ipl.EventJoined, func(ev ipl.Event) bool { return ev.Member == late.Identifier() })
	}
	if w, err := master.Registry().Elect(ctx, "master"); err != nil || w != master.Identifier() {
		t.Fatalf("elect: %v, %v", w, err)
	}
	inbox, err := master.CreateReceivePort(ctx, inboxType, "inbox", ipl.Global())
	if err != nil {
		t.Fatal(err)
	}
	sp, err := sender.CreateSendPort(inboxType, "to-inbox")
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.ConnectGlobal(ctx, "inbox"); err != nil {
		t.Fatal(err)
	}
	send := func(sp ipl.SendPort, v int64) {
		t.Helper()
		m, err := sp.NewMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.WriteInt64(v); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Finish(); err != nil {
			t.Fatalf("send %d: %v", v, err)
		}
	}
	receive := func(want int64) {
		t.Helper()
		m, err := inbox.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		v, err := m.ReadInt64()
		if err != nil || v != want {
			t.Fatalf("received %d, %v; want %d", v, err, want)
		}
		if _, err := m.Finish(); err != nil {
			t.Fatal(err)
		}
	}
	send(sp, 1)
	receive(1)
	before := master.Registry().Members()

	first.kill() // SIGKILL
	for _, ib := range all {
		ev := waitIbisEvent(t, ib, ipl.EventRegistryLost, nil)
		if !strings.HasPrefix(ev.Name, registry.LostReconnecting) {
			t.Fatalf("%v: lost event %q, want one saying it reconnects", ib.Identifier(), ev.Name)
		}
		if _, err := ib.Registry().ElectionResult(ctx, "master"); !errors.Is(err, ipl.ErrRegistryLost) {
			t.Fatalf("election result while the registry is down: %v", err)
		}
		if _, err := ib.Registry().Sequence(ctx, "n"); !errors.Is(err, ipl.ErrRegistryLost) {
			t.Fatalf("sequence while the registry is down: %v", err)
		}
		select {
		case <-ib.Done():
			t.Fatalf("%v ended because the registry went away", ib.Identifier())
		default:
		}
		if got := ib.Registry().Members(); !reflect.DeepEqual(got, before) {
			t.Fatalf("members while the registry is down: %v", got)
		}
	}
	send(sp, 2) // the data path does not need the registry
	receive(2)
	lateSP, err := late.CreateSendPort(inboxType, "late-to-inbox")
	if err != nil {
		t.Fatal(err)
	}
	if err := lateSP.ConnectGlobal(ctx, "inbox"); !errors.Is(err, ipl.ErrRegistryLost) {
		t.Fatalf("global name lookup while the registry is down: %v", err)
	}

	startRegistry(t, "-host", "127.0.0.1", "-port", portOf(addr))
	for _, ib := range all {
		waitIbisEvent(t, ib, ipl.EventRegistryRestored, nil)
		if got := ib.Registry().Members(); !reflect.DeepEqual(got, before) {
			t.Fatalf("members after the restart: %v, want %v", got, before)
		}
		if w, err := ib.Registry().ElectionResult(ctx, "master"); err != nil || w != master.Identifier() {
			t.Fatalf("election result after the restart: %v, %v", w, err)
		}
	}
	if err := lateSP.ConnectGlobal(ctx, "inbox"); err != nil {
		t.Fatalf("global name after the restart: %v", err)
	}
	send(lateSP, 3)
	receive(3)
	send(sp, 4)
	receive(4)

	newcomer := newIbis("newcomer")
	if got := newcomer.Identifier().ID; got != "3" {
		t.Fatalf("newcomer after the restart is %v, want member number 3", newcomer.Identifier())
	}
	if w, err := newcomer.Registry().Elect(ctx, "master"); err != nil || w != master.Identifier() {
		t.Fatalf("newcomer's elect after the restart: %v, %v", w, err)
	}
	nsp, err := newcomer.CreateSendPort(inboxType, "new-to-inbox")
	if err != nil {
		t.Fatal(err)
	}
	if err := nsp.ConnectGlobal(ctx, "inbox"); err != nil {
		t.Fatalf("newcomer's global name lookup: %v", err)
	}
	send(nsp, 5)
	receive(5)
}

// portOf returns the port of a host:port address.
func portOf(addr string) string { return addr[strings.LastIndex(addr, ":")+1:] }
