package netns

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

func TestPrefixInvalid(t *testing.T) {
	for _, p := range []string{"Upper", "a b", "a/b", strings.Repeat("a", 41)} {
		if _, err := New(context.Background(), 1, WithPrefix(p)); !errors.Is(err, ErrInvalid) {
			t.Errorf("prefix %q: %v, want ErrInvalid", p, err)
		}
	}
}

// TestPrefixAndRate names a network's namespaces and shapes a host's cable: tbf on eth0 and
// on the switch port.
func TestPrefixAndRate(t *testing.T) {
	ctx := context.Background()
	nw, err := New(ctx, 1, WithPrefix("netnstest-rate"))
	if errors.Is(err, ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nw.Close() })
	h := nw.Hosts()[0]
	if nw.Prefix() != "netnstest-rate" || h.Namespace != "netnstest-rate-h0" {
		t.Fatalf("prefix %q, host namespace %q", nw.Prefix(), h.Namespace)
	}
	if err := h.SetRate(ctx, 1000); !errors.Is(err, ErrInvalid) {
		t.Errorf("SetRate(1000): %v, want ErrInvalid", err)
	}
	if err := h.SetRate(ctx, 50e6); errors.Is(err, ErrUnavailable) {
		t.Skip(err)
	} else if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-n", h.Namespace, "qdisc", "show", "dev", "eth0"}, {"-n", nw.switchNS, "qdisc", "show", "dev", h.port}} {
		out, err := exec.Command("tc", args...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "tbf") || !strings.Contains(string(out), "rate 50Mbit") {
			t.Errorf("tc %q: %v\n%s", args, err, out)
		}
	}
}
