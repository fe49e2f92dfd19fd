package netns

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

func TestInvalid(t *testing.T) {
	for _, n := range []int{0, 251} {
		if _, err := New(context.Background(), n); !errors.Is(err, ErrInvalid) {
			t.Errorf("%d hosts: %v, want ErrInvalid", n, err)
		}
	}
	if _, err := New(context.Background(), 1, WithSubnet(256)); !errors.Is(err, ErrInvalid) {
		t.Errorf("subnet 256: %v, want ErrInvalid", err)
	}
}

// TestBuildAndDelete builds a network of two hosts, takes a link down and up, and checks
// that Close leaves no namespace behind.
func TestBuildAndDelete(t *testing.T) {
	ctx := context.Background()
	nw, err := New(ctx, 2, WithSubnet(7))
	if errors.Is(err, ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nw.Close() })
	hosts := nw.Hosts()
	if len(hosts) != 2 || hosts[1].Addr != "10.203.7.2" {
		t.Fatalf("hosts %+v", hosts)
	}
	argv := append(hosts[0].Exec(), "ip", "-4", "addr", "show", "eth0")
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "10.203.7.1/24") {
		t.Fatalf("eth0 of host 0: %v\n%s", err, out)
	}
	if err := hosts[1].LinkDown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := hosts[1].LinkUp(ctx); err != nil {
		t.Fatal(err)
	}
	names := []string{nw.switchNS, hosts[0].Namespace, hosts[1].Namespace}
	if err := nw.Close(); err != nil {
		t.Fatal(err)
	}
	list, err := exec.Command("ip", "netns", "list").CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.Contains(string(list), n) {
			t.Errorf("namespace %s left after Close", n)
		}
	}
}

func TestGridInvalid(t *testing.T) {
	for _, sites := range [][]SiteSpec{nil, {{Hosts: 0}}, {{Hosts: 251}}, {{Hosts: 1, Rate: 10}}, make([]SiteSpec, 65)} {
		if _, err := NewGrid(context.Background(), sites); !errors.Is(err, ErrInvalid) {
			t.Errorf("NewGrid(%d sites): %v, want ErrInvalid", len(sites), err)
		}
	}
	if _, err := NewGrid(context.Background(), []SiteSpec{{Hosts: 1}}, WithPrefix("Bad")); !errors.Is(err, ErrInvalid) {
		t.Errorf("NewGrid with prefix Bad: %v, want ErrInvalid", err)
	}
}
