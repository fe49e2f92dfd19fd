package applaunch

import (
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

// TestServerOptionsHeartbeat: the launcher's registry takes IBIS_HEARTBEAT and
// IBIS_DEATH_TIMEOUT, and refuses a value that is not a positive duration by name.
func TestServerOptionsHeartbeat(t *testing.T) {
	t.Setenv(ipl.EnvHeartbeat, "10s")
	t.Setenv(ipl.EnvDeathTimeout, "45s")
	sopts, err := ServerOptions(3)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := registry.StartEmbedded("127.0.0.1:0", sopts...)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Close() }()
	if got := srv.HeartbeatInterval(); got != 10*time.Second {
		t.Errorf("heartbeat %v, want 10s", got)
	}
	if got := srv.DeathTimeout(); got != 45*time.Second {
		t.Errorf("death timeout %v, want 45s", got)
	}
	for _, env := range []string{ipl.EnvHeartbeat, ipl.EnvDeathTimeout} {
		for _, bad := range []string{"fast", "-1s", "0"} {
			t.Setenv(env, bad)
			if _, err := ServerOptions(3); err == nil || !strings.Contains(err.Error(), env) {
				t.Errorf("%s=%q: error %v, want one naming the variable", env, bad, err)
			}
		}
		t.Setenv(env, "10s")
	}
}
