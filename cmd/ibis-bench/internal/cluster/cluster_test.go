package cluster

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	_ "github.com/ibisgo/ibis/impl/tcp"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

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

func TestPrefixWriter(t *testing.T) {
	var out bytes.Buffer
	var mu sync.Mutex
	p := &prefixWriter{mu: &mu, w: &out, prefix: []byte("[peer 1] ")}
	_, _ = p.Write([]byte("one\ntw"))
	_, _ = p.Write([]byte("o\nthree"))
	p.flush()
	if want := "[peer 1] one\n[peer 1] two\n[peer 1] three\n"; out.String() != want {
		t.Fatalf("%q", out.String())
	}
}
