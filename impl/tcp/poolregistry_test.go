package tcp

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// A pool of several processes with no registry set is refused at once: the process
// would run a registry of its own that no other can find, and wait for ever (sor and
// fib printed nothing until killed). A pool of one still runs its own.
func TestPoolWithoutRegistryRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := ipl.New(ctx, ipl.WithImplementation(Name), ipl.WithPoolSize(2))
	if !errors.Is(err, ipl.ErrInvalidArgument) || !strings.Contains(err.Error(), ipl.EnvRegistry) {
		t.Errorf("New with a pool of 2 and no registry: %v, want ErrInvalidArgument naming %s", err, ipl.EnvRegistry)
	}
	ib, err := ipl.New(ctx, ipl.WithImplementation(Name), ipl.WithPoolSize(1))
	if err != nil {
		t.Fatalf("New with a pool of 1 and no registry: %v", err)
	}
	_ = ib.Close()
}
