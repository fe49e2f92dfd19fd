//go:build mpi

package mpi

import (
	"bytes"
	"errors"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ibisgo/ibis/impl/mp/internal/mpitest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The engine under mpirun: every rank sends a message to every rank (itself included),
// small and large, receives them all, broadcasts from rank 0 and stops cleanly.
func TestEngineUnderMPIRun(t *testing.T) {
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, "^TestEngineRank$", 60*time.Second)
	}
	mpitest.Run(t, 3, "^TestEngineRank$", 60*time.Second, envFunneled+"=1")
}

// envFunneled makes TestEngineRank start a funneled engine.
const envFunneled = "IBIS_MPITEST_FUNNELED"

func TestEngineRank(t *testing.T) {
	if _, ok := mpitest.Rank(); !ok {
		t.Skip("runs as a rank of TestEngineUnderMPIRun")
	}
	funneled := os.Getenv(envFunneled) != ""
	e, err := Start(Config{Funneled: funneled})
	if err != nil {
		t.Fatal(err)
	}
	if e.Serialized() == funneled {
		t.Errorf("Funneled=%v gave an engine with Serialized()=%v", funneled, e.Serialized())
	}
	if _, err := Start(Config{}); !errors.Is(err, ErrInUse) {
		t.Errorf("second Start: %v, want ErrInUse", err)
	}
	w := e.World()
	payload := func(from, to, size int) []byte {
		b := make([]byte, size)
		for i := range b {
			b[i] = byte(from*7 + to*13 + i)
		}
		return b
	}
	// Empty, small, as large as a poll receives itself and just larger, large.
	sizes := []int{0, 100, InlineMax, InlineMax + 1, 300 << 10}
	got := make(chan error, w.Size*len(sizes))
	want := w.Size * len(sizes)
	e.Do(func(l *Loop) {
		l.SetHandler(func(l *Loop, m Message) {
			buf := make([]byte, m.Size)
			l.Recv(m, buf, func(err error) {
				if err == nil && !bytes.Equal(buf, payload(m.Src, w.Rank, m.Size)) {
					err = errors.New("payload differs")
				}
				got <- err
			})
		})
	})
	sent := make(chan error, w.Size*len(sizes))
	for to := range w.Size {
		for i, s := range sizes {
			b := payload(w.Rank, to, s)
			done := Func(func(err error) { sent <- err })
			if i%2 == 0 {
				e.Do(func(l *Loop) { l.SendTo(to, 5, b, done) })
			} else if !e.Send(to, 5, b, done) {
				t.Fatal("Send refused by a running engine")
			}
		}
	}
	for range want {
		if err := <-sent; err != nil {
			t.Error(err)
		}
		if err := <-got; err != nil {
			t.Error(err)
		}
	}
	buf := make([]byte, 16)
	if w.Rank == 0 {
		copy(buf, "from rank zero")
	}
	bc := make(chan error, 1)
	e.Do(func(l *Loop) { l.Bcast(buf, func(err error) { bc <- err }) })
	if err := <-bc; err != nil || string(buf[:14]) != "from rank zero" {
		t.Errorf("bcast: %v %q", err, buf)
	}
	if err := e.Stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := Start(Config{}); !errors.Is(err, ErrFinalized) {
		t.Errorf("Start after Stop: %v, want ErrFinalized", err)
	}
	if e.Do(func(*Loop) {}) {
		t.Error("Do after Stop accepted work")
	}
}
