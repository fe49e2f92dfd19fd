package addrlist

import (
	"net"
	"slices"
	"testing"
)

func ips(ss ...string) []net.IP {
	out := make([]net.IP, len(ss))
	for i, s := range ss {
		out[i] = net.ParseIP(s)
	}
	return out
}

func TestChoose(t *testing.T) {
	ifaces := ips("127.0.0.1", "::1", "fe80::1", "2001:db8::7", "10.1.0.7", "169.254.3.3", "192.168.5.7", "10.1.0.7")
	cases := []struct {
		name  string
		local net.IP
		want  []string
	}{
		{"registry on loopback: loopback alone", net.ParseIP("127.0.0.1"), []string{"127.0.0.1:4000"}},
		{"registry on ::1", net.ParseIP("::1"), []string{"[::1]:4000"}},
		{"the registry's local address first, then IPv4, then global IPv6", net.ParseIP("192.168.5.7"),
			[]string{"192.168.5.7:4000", "10.1.0.7:4000", "[2001:db8::7]:4000"}},
		{"an IPv6 local address first", net.ParseIP("2001:db8::7"),
			[]string{"[2001:db8::7]:4000", "10.1.0.7:4000", "192.168.5.7:4000"}},
		{"an IPv4-mapped local address as IPv4", net.ParseIP("::ffff:10.1.0.7"),
			[]string{"10.1.0.7:4000", "192.168.5.7:4000", "[2001:db8::7]:4000"}},
		{"no local address", nil, []string{"10.1.0.7:4000", "192.168.5.7:4000", "[2001:db8::7]:4000"}},
	}
	for _, c := range cases {
		if got := Choose(c.local, 4000, ifaces); !slices.Equal(got, c.want) {
			t.Errorf("%s: Choose = %q, want %q", c.name, got, c.want)
		}
	}
	if got := Choose(nil, 9, ips("127.0.0.1", "fe80::2")); !slices.Equal(got, []string{"127.0.0.1:9"}) {
		t.Errorf("only loopback and link-local: %q, want loopback", got)
	}
}

func TestChooseBounded(t *testing.T) {
	var many []net.IP
	for i := range 40 {
		many = append(many, net.IPv4(10, 9, 0, byte(i+1)))
	}
	got := Choose(net.ParseIP("10.9.1.1"), 65535, many)
	if len(got) != MaxEntries || got[0] != "10.9.1.1:65535" {
		t.Fatalf("Choose with 40 addresses: %d entries starting %q", len(got), got[0])
	}
	if _, err := Encode(got); err != nil {
		t.Fatalf("the chosen list does not encode: %v", err)
	}
}

func TestIsWildcard(t *testing.T) {
	for a, want := range map[string]bool{"[::]:5": true, "0.0.0.0:5": true, ":5": true, "127.0.0.1:5": false, "mpi:0": false, "x": false} {
		if got := IsWildcard(a); got != want {
			t.Errorf("IsWildcard(%q) = %v, want %v", a, got, want)
		}
	}
}
