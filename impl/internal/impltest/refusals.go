package impltest

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ibisgo/ibis/ipl"
)

// RefusalsRateLimited checks that many refused connections (here garbage instead of
// the pool check, as a scan sends) are logged at a bounded rate: a few in full, the
// rest counted in summary lines, and nothing lost from the count.
func RefusalsRateLimited(t *testing.T, impl string, props map[string]string) {
	core, logs := observer.New(zap.WarnLevel)
	ib := NewIbis(t, impl, props, ipl.WithLogger(zap.New(core)))
	const attempts = 300
	var wg sync.WaitGroup
	for range 4 { // a few at a time, as a scan would
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range attempts / 4 {
				c, err := net.Dial("tcp", ib.Identifier().Address)
				if err != nil {
					t.Error(err)
					return
				}
				_ = c.SetDeadline(time.Now().Add(time.Minute))
				_, _ = c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n" + strings.Repeat(".", 64)))
				_, _ = io.Copy(io.Discard, c) // until the member drops it
				_ = c.Close()
			}
		}()
	}
	wg.Wait()
	if err := ib.Close(); err != nil { // logs the summary of what is still counted
		t.Fatal(err)
	}
	full, counted, summaries := 0, 0, 0
	for _, e := range logs.All() {
		switch {
		case strings.HasPrefix(e.Message, "refused a connection"):
			full++
		case e.Message == "refused connections not logged one by one":
			summaries++
			counted += int(e.ContextMap()["count"].(int64))
		}
	}
	t.Logf("%d refusals: %d logged in full, %d counted in %d summary lines", attempts, full, counted, summaries)
	if full+counted != attempts {
		t.Errorf("%d logged + %d counted, want %d refusals in all", full, counted, attempts)
	}
	if full+summaries > attempts/10 {
		t.Errorf("%d log lines for %d refusals: not rate-limited", full+summaries, attempts)
	}
}
