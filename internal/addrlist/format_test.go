package addrlist

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	for _, list := range [][]string{
		{"127.0.0.1:4000"},
		{"10.0.0.5:4001", "[2001:db8::5]:4001", "[::1]:9"},
		{"node17.cluster:65535", "192.168.1.2:1"},
	} {
		s, err := Encode(list)
		if err != nil {
			t.Fatalf("Encode(%q): %v", list, err)
		}
		got, err := Parse(s)
		if err != nil || !slices.Equal(got, list) {
			t.Fatalf("Parse(%q) = %q, %v; want %q", s, got, err, list)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, s := range []string{
		"", ",", "10.0.0.1:4000,", "10.0.0.1", "10.0.0.1:0", "10.0.0.1:65536", "10.0.0.1:+80",
		"10.0.0.1:080", ":4000", "2001:db8::1:4000", "[2001:db8::1]", "a b:1",
		strings.Repeat("10.0.0.1:1,", MaxEntries) + "10.0.0.1:1",
		strings.Repeat("h", MaxLength) + ":1",
	} {
		if got, err := Parse(s); !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%q) = %q, %v; want ErrInvalid", s, got, err)
		}
	}
	if _, err := Encode(nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("Encode(nil): %v, want ErrInvalid", err)
	}
}

func TestHasLoopback(t *testing.T) {
	for s, want := range map[string]bool{
		"127.0.0.1:1":               true,
		"10.0.0.1:1,[::1]:2":        true,
		"localhost:5":               true,
		"10.0.0.1:1,[2001:db8::]:2": false,
		"garbage,127.0.0.2:3":       true,
		"mpi:3":                     false,
		"":                          false,
	} {
		if got := HasLoopback(s); got != want {
			t.Errorf("HasLoopback(%q) = %v, want %v", s, got, want)
		}
	}
}

// FuzzParse: Parse reads what another process published; it never panics, and what it
// accepts encodes back to the same string.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"127.0.0.1:4000", "10.0.0.5:4001,[2001:db8::5]:4001", "[fe80::1%eth0]:3", ",", "a:1,b:2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		list, err := Parse(s)
		_ = HasLoopback(s)
		if err != nil {
			return
		}
		back, err := Encode(list)
		if err != nil || back != s {
			t.Fatalf("Parse(%q) = %q, but Encode gives %q, %v", s, list, back, err)
		}
	})
}
