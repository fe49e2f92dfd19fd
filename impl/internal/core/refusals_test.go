package core

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/ibisgo/ibis/ipl"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// The refusal log writes a burst per window in full and one summary line for the rest,
// with the count, when the next window begins or when it is flushed.
func TestRefusalLogWindows(t *testing.T) {
	obs, logs := observer.New(zap.WarnLevel)
	log := zap.New(obs)
	now := time.Unix(1000, 0)
	r := &refusalLog{now: func() time.Time { return now }}
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}
	for range 100 {
		r.refused(log, "refused a connection: test", addr, errors.New("no"))
	}
	if got := logs.Len(); got != refusalBurst {
		t.Fatalf("%d lines after 100 refusals in one window, want %d", got, refusalBurst)
	}
	now = now.Add(refusalWindow)
	r.refused(log, "refused a connection: test", addr, errors.New("no"))
	all := logs.All()
	if len(all) != refusalBurst+2 || all[refusalBurst].ContextMap()["count"] != int64(100-refusalBurst) {
		t.Fatalf("after the window: %v, want a summary of %d and the new refusal", all[refusalBurst:], 100-refusalBurst)
	}
	r.flush(log) // nothing counted: nothing to say
	if logs.Len() != refusalBurst+2 {
		t.Fatalf("an empty flush logged: %v", logs.All()[refusalBurst+2:])
	}
}

// A reverse connection whose dial gave up (a token nobody waits for) is closed without
// a refusal: it is no pool-check failure, and a program with a short steal timeout
// warned "not authenticated for the pool" for each one.
func TestLateReverseConnectionIsNoRefusal(t *testing.T) {
	obs, logs := observer.New(zap.DebugLevel)
	in := &Instance{acceptLog: zap.New(obs), refusals: newRefusalLog()}
	srv, cli := net.Pipe()
	defer cli.Close()
	go func() {
		_, _ = cli.Write(append(reverseMagic[:], make([]byte, tokenSize)...))
	}()
	_, err := in.Authenticate(srv)
	if !errors.Is(err, errReverseLate) || errors.Is(err, ipl.ErrUnauthenticated) {
		t.Errorf("Authenticate of a late reverse connection: %v, want errReverseLate alone", err)
	}
	if warned := logs.FilterLevelExact(zap.WarnLevel).Len(); warned != 0 || logs.Len() != 1 {
		t.Errorf("logged %v, want one debug line", logs.All())
	}
}
