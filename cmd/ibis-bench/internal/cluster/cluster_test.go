package cluster

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	_ "github.com/ibisgo/ibis/impl/tcp"
)

// TestMain plays a started peer that fails at once (exit status 3), for TestPeerFails.
func TestMain(m *testing.M) {
	if IsPeer() {
		os.Exit(3)
	}
	goleak.VerifyTestMain(m)
}

// TestPeerFails: a started peer that exits before the pool is complete ends Join at once
// with ErrPeerFailed, rather than leaving the coordinator waiting for it.
func TestPeerFails(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	g, err := Join(ctx, Settings{Args: []string{"fail"}}, Spec{Members: 2})
	if !errors.Is(err, ErrPeerFailed) || g != nil {
		t.Fatalf("Join = %v, %v; want ErrPeerFailed", g, err)
	}
	if !strings.Contains(err.Error(), "exited with status 3") {
		t.Errorf("error %q does not say how the peer ended", err)
	}
}

func TestExistingPoolChecks(t *testing.T) {
	ctx := context.Background()
	if _, err := Join(ctx, Settings{Registry: "127.0.0.1:1", Pool: "p"}, Spec{Members: 2}); !errors.Is(err, ErrPoolSize) {
		t.Fatalf("open pool: %v", err)
	}
	if _, err := Join(ctx, Settings{Registry: "127.0.0.1:1", Pool: "p", Size: 2}, Spec{Members: 4, MinMembers: 3}); !errors.Is(err, ErrPoolSize) {
		t.Fatalf("small pool: %v", err)
	}
}

// TestSingleMember: a pool of one (no peers to start) elects this process and
// closes cleanly.
func TestSingleMember(t *testing.T) {
	g, err := Join(context.Background(), Settings{}, Spec{Members: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !g.IsCoordinator || len(g.Peers) != 0 || g.Index != -1 || len(g.Others()) != 0 {
		t.Fatalf("group %+v", g)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if g.Err() == nil {
		t.Fatal("Ctx still live after Close")
	}
	if err := g.PeerDone(errors.New("x")); err == nil || g.PeerDone(nil) != nil {
		t.Fatal("PeerDone")
	}
}

func TestPeerArgs(t *testing.T) {
	t.Setenv(EnvPeerArgs, `["pingpong","-reps","3"]`)
	args, ok := PeerArgs()
	if !ok || strings.Join(args, " ") != "pingpong -reps 3" || !IsPeer() {
		t.Fatalf("%v %v", args, ok)
	}
	t.Setenv(EnvPeerArgs, `not json`)
	if args, ok := PeerArgs(); !ok || len(args) != 1 || !strings.HasPrefix(args[0], "invalid-") {
		t.Fatalf("malformed: %v %v", args, ok)
	}
}
