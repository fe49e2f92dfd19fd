package mp

import (
	"context"
	"net"
	"testing"
	"time"
)

func TestRegistryListen(t *testing.T) {
	for _, c := range []struct {
		host       string
		multi      bool
		want       string
		everywhere bool
	}{
		{"", false, "127.0.0.1", false},
		{"0.0.0.0", false, "127.0.0.1", false},
		{"10.1.2.3", false, "10.1.2.3", false},
		{"", true, "", true},
		{"::", true, "", true},
		{"127.0.0.1", true, "", true},
		{"localhost", true, "", true},
		{"10.1.2.3", true, "10.1.2.3", false},
		{"node7", true, "node7", false},
	} {
		got, all := registryListen(c.host, c.multi)
		if got != c.want || all != c.everywhere {
			t.Errorf("registryListen(%q, %v) = %q, %v; want %q, %v", c.host, c.multi, got, all, c.want, c.everywhere)
		}
	}
}

// The others take the first of rank 0's addresses that they reach.
func TestPickReachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := dead.Addr().String()
	_ = dead.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	live := ln.Addr().String()
	if got := pickReachable(ctx, refused+","+live); got != live {
		t.Errorf("picked %q, want %q", got, live)
	}
	if got := pickReachable(ctx, refused+","+refused); got != refused {
		t.Errorf("none reachable: picked %q, want the first", got)
	}
	if got := pickReachable(ctx, "mpi-host:1"); got != "mpi-host:1" {
		t.Errorf("a single address: picked %q", got)
	}
}
