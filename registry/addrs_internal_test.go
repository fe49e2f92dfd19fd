package registry

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseAddrs(t *testing.T) {
	long := strings.TrimSuffix(strings.Repeat("h:1,", MaxRegistryAddrs+1), ",")
	for _, tt := range []struct {
		in   string
		want []string
		err  string // a part of the error's text; "" for none
	}{
		{in: "127.0.0.1:8888", want: []string{"127.0.0.1:8888"}},
		{in: "a:8888,b:8888", want: []string{"a:8888", "b:8888"}},
		{in: " a:1 ,\tb:2 , [::1]:3", want: []string{"a:1", "b:2", "[::1]:3"}},
		{in: ":8888", want: []string{":8888"}},
		{in: "", err: "empty registry address"},
		{in: "  ", err: "empty registry address"},
		{in: "a:1,,b:2", err: "item 2 is empty"},
		{in: "a:1,", err: "item 2 is empty"},
		{in: ",a:1", err: "item 1 is empty"},
		{in: "a", err: `"a": want host:port`},
		{in: "a:1,b", err: `"b": want host:port`},
		{in: "a:0", err: `port "0"`},
		{in: "a:65536", err: `port "65536"`},
		{in: "a:http", err: `port "http"`},
		{in: "::1:8888", err: "want host:port"},
		{in: "a:1,b:2,a:1", err: "names a:1 twice (items 1 and 3)"},
		{in: "A:1, a:1", err: "twice"},
		{in: long, err: "exceeds the maximum"},
	} {
		got, err := ParseAddrs(tt.in)
		if tt.err != "" {
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseAddrs(%q) = %v, %v; want an ErrInvalid saying %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("ParseAddrs(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// Join refuses a malformed list at once, naming it, without dialling.
func TestJoinRefusesBadAddrList(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), internalTimeout)
	defer cancel()
	for _, addr := range []string{"", "127.0.0.1:1,,127.0.0.1:2", "127.0.0.1:1,127.0.0.1:1", "127.0.0.1"} {
		c, err := Join(ctx, addr, "p")
		if c != nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "registry address") {
			t.Errorf("Join(%q) = %v, %v; want an ErrInvalid about the registry address", addr, c, err)
		}
	}
}

// The clients of a process spread over the front ends: consecutive ones
// begin at consecutive front ends, so any n of them cover all n.
func TestFirstAddrSpreads(t *testing.T) {
	if got := firstAddr(1); got != 0 {
		t.Fatalf("firstAddr(1) = %d", got)
	}
	const n = 3
	seen := make(map[int]bool)
	for range n {
		i := firstAddr(n)
		if i < 0 || i >= n {
			t.Fatalf("firstAddr(%d) = %d", n, i)
		}
		seen[i] = true
	}
	if len(seen) != n {
		t.Fatalf("%d clients began at front ends %v, want all %d", n, seen, n)
	}
}

func TestServerLostAfter(t *testing.T) {
	const s = time.Second
	for _, tt := range []struct {
		hb, death time.Duration
		fronts    int
		want      time.Duration
	}{
		{2 * s, 30 * s, 1, 60 * s}, // one front end: a paused registry is waited for
		{2 * s, 30 * s, 2, 15 * s}, // several: move before the front end's lease ends
		{2 * s, 30 * s, 5, 15 * s},
		{2 * s, 2 * s, 2, 4 * s}, // never below two heartbeat intervals
		{2 * s, 0, 1, 6 * s},     // a server that announces no death timeout
		{2 * s, 0, 2, 6 * s},
	} {
		if got := serverLostAfter(tt.hb, tt.death, tt.fronts); got != tt.want {
			t.Errorf("serverLostAfter(%v, %v, %d) = %v, want %v", tt.hb, tt.death, tt.fronts, got, tt.want)
		}
	}
}

// Each front end is checked against its own host name under TLS.
func TestTLSServerNamePerFrontEnd(t *testing.T) {
	cfg := defaultClientConfig()
	cfg.tls = &tls.Config{}
	c := newClient(cfg, "a.example:1", "[::1]:2")
	if got := c.eps[0].tls.ServerName; got != "a.example" {
		t.Errorf("server name of the first front end %q", got)
	}
	if got := c.eps[1].tls.ServerName; got != "::1" {
		t.Errorf("server name of the second front end %q", got)
	}
	c.endLife()
}
