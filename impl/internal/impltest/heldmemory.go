package impltest

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// HeldMemory measures what a receiver holds for senders that stop in the middle of
// a packet: $IBIS_HELD_CONNS raw connections (default 200) to one many-to-one port,
// each sending half of a 64 KiB packet, then nothing. It reports the process's
// resident memory and live heap with every connection holding its half packet, and
// again once the message timeout cut them all. A measurement, not a check: the
// figures go to docs/reliability-load.md. It runs only when $IBIS_HELD_CONNS is set.
//
//	IBIS_HELD_CONNS=2000 go test -count=1 -run TestHeldMemory -v ./impl/tcp/
func HeldMemory(t *testing.T, impl string, props map[string]string) {
	conns, err := strconv.Atoi(os.Getenv("IBIS_HELD_CONNS"))
	if err != nil {
		t.Skip("a measurement: set IBIS_HELD_CONNS to the number of connections")
	}
	const timeout = time.Minute
	ib := NewIbis(t, impl, props, ipl.WithMessageTimeout(timeout))
	rec := lostRecorder{lost: make(chan error, conns)}
	if _, err := ib.CreateReceivePort(t.Context(), dataType, "in", ipl.WithConnectionHandler(rec)); err != nil {
		t.Fatal(err)
	}
	base := heldNow()
	half := append(header(0x01, [6]uint32{0, 8192, 0, 0, 0, 0}), make([]byte, 32<<10)...)
	began := time.Now()
	for i := range conns {
		c := RawConnectAs(t, ib, dataType, "in", fmt.Sprintf("half-%d", i))
		defer c.Close()
		if _, err := c.Write(half); err != nil {
			t.Fatal(err)
		}
	}
	// Let the receiver take in what was sent (it is all on its way at once).
	time.Sleep(2 * time.Second)
	held := heldNow()
	if len(rec.lost) > 0 || time.Since(began) > timeout {
		t.Fatalf("connections were cut before all were made (%v): raise the timeout", time.Since(began))
	}
	for range conns {
		select {
		case <-rec.lost:
		case <-time.After(2 * time.Minute):
			t.Fatal("the stalled connections were not all cut")
		}
	}
	// What stays resident once they are gone: the runtime returns freed memory to
	// the system in the background, a little at a time.
	var after []string
	cut := time.Now()
	for _, at := range []time.Duration{time.Second, 10 * time.Second, 30 * time.Second, time.Minute} {
		time.Sleep(time.Until(cut.Add(at)))
		after = append(after, fmt.Sprintf("after %v: %s", at, heldNow()))
	}
	t.Logf("%s %v, %d connections holding half a packet (32 KiB of 64 KiB): before %s; holding %s (%.1f KiB RSS, %.1f KiB live heap a connection); all cut, %s",
		impl, props, conns, base, held, float64(held.rss-base.rss)/float64(conns)/1024, float64(held.live-base.live)/float64(conns)/1024, strings.Join(after, "; "))
}

// heldFigures are a process's resident memory (VmRSS), its peak (VmHWM) and its live
// heap after a collection.
type heldFigures struct{ rss, hwm, live int64 }

func (h heldFigures) String() string {
	return fmt.Sprintf("RSS %.1f MiB (peak %.1f), live heap %.1f MiB", float64(h.rss)/(1<<20), float64(h.hwm)/(1<<20), float64(h.live)/(1<<20))
}

func heldNow() (h heldFigures) {
	defer func() {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		h.live = int64(ms.HeapAlloc)
	}()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return h
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			h.rss = kb << 10
		case "VmHWM":
			h.hwm = kb << 10
		}
	}
	return h
}
