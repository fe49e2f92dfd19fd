package tcp

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/impl/internal/impltest"
	"github.com/ibisgo/ibis/internal/tlsconf"
	"github.com/ibisgo/ibis/ipl"
)

// Many refused connections are logged at a bounded rate.
func TestRefusalsLoggedAtBoundedRate(t *testing.T) { impltest.RefusalsRateLimited(t, Name, nil) }

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
	if _, err := secured.CreateReceivePort(t.Context(), dataType, "in"); err != nil {
		t.Fatal(err)
	}
	if _, err := plain.CreateReceivePort(t.Context(), dataType, "in"); err != nil {
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
