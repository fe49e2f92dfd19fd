package nio

import (
	"testing"

	"github.com/ibisgo/ibis/impl/internal/impltest"
)

// Many refused connections are logged at a bounded rate (the refusal happens before a
// flavour takes the connection, so one flavour covers them all).
func TestRefusalsLoggedAtBoundedRate(t *testing.T) { impltest.RefusalsRateLimited(t, Name, nil) }
