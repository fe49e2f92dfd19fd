package nio

import (
	"testing"

	"github.com/ibisgo/ibis/impl/internal/impltest"
)

// Bad bytes on one connection close that connection only, whichever flavour reads it
// (the port type is many-to-one, so a forced blocking flavour leaves it nonblocking).
func TestBadInputClosesOnlyThatConnection(t *testing.T) {
	for _, f := range []string{"nonblocking", "thread"} {
		t.Run(f, func(t *testing.T) { impltest.BadInput(t, Name, map[string]string{PropertyReceive: f}) })
	}
}

func TestOversizeMessageRefused(t *testing.T) {
	for _, f := range []string{"blocking", "nonblocking", "thread"} {
		t.Run(f, func(t *testing.T) { impltest.OversizeRefused(t, Name, map[string]string{PropertySend: f}) })
	}
}
