package tcp

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ibisgo/ibis/internal/tlsconf"
	"github.com/ibisgo/ibis/ipl"
)

// Many refused connections (here garbage instead of the pool check) are logged at a
// bounded rate: a few in full, the rest counted in summary lines, and nothing lost from
// the count.
func TestRefusalsLoggedAtBoundedRate(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	ib := newTestIbis(t, ipl.WithLogger(zap.New(core)))
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

// A member without TLS that dials a member with TLS is told at once that the other
// member speaks TLS (not a bare EOF after the handshake timeout); the reverse says that
// the peer does not speak TLS.
func TestTLSMismatchNamed(t *testing.T) {
	files, err := tlsconf.Generate(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	secured := newTestIbis(t, ipl.WithPool("secured"), ipl.WithTLS(files.Cert, files.Key, files.CA))
	plain := newTestIbis(t, ipl.WithPool("plain"))
	if _, err := secured.CreateReceivePort(dataType, "in"); err != nil {
		t.Fatal(err)
	}
	if _, err := plain.CreateReceivePort(dataType, "in"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		from, to ipl.Ibis
		want     string
	}{
		{"plain to TLS", plain, secured, "speaks TLS"},
		{"TLS to plain", secured, plain, "does not speak TLS"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sp, err := c.from.CreateSendPort(dataType, "")
			if err != nil {
				t.Fatal(err)
			}
			defer sp.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			start := time.Now()
			err = sp.Connect(ctx, c.to.Identifier(), "in")
			t.Logf("refused after %v: %v", time.Since(start).Round(time.Millisecond), err)
			if !errors.Is(err, ipl.ErrUnauthenticated) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("connect: %v, want ErrUnauthenticated saying %q", err, c.want)
			}
		})
	}
}
