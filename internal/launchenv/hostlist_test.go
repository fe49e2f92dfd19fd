package launchenv

import (
	"errors"
	"slices"
	"testing"
)

func TestHostlist(t *testing.T) {
	for _, c := range []struct {
		in    string
		first string
		all   []string
	}{
		{"localhost", "localhost", []string{"localhost"}},
		{"node[01-04,07],gpu[1-2]", "node01", []string{"node01", "node02", "node03", "node04", "node07", "gpu1", "gpu2"}},
		{"n[8-10]", "n8", []string{"n8", "n9", "n10"}},
		{"r[1-2]-n[01-02].ib", "r1-n01.ib", []string{"r1-n01.ib", "r1-n02.ib", "r2-n01.ib", "r2-n02.ib"}},
		{"a,b.example.org,c_1", "a", []string{"a", "b.example.org", "c_1"}},
		{"[1-2]x", "1x", []string{"1x", "2x"}},
	} {
		hl, err := ParseHostlist(c.in)
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		if got := hl.First(); got != c.first {
			t.Errorf("%q: first %q, want %q", c.in, got, c.first)
		}
		all, err := hl.Expand(100)
		if err != nil || !slices.Equal(all, c.all) {
			t.Errorf("%q: expands to %q, %v; want %q", c.in, all, err, c.all)
		}
	}
}

func TestHostlistErrors(t *testing.T) {
	for _, in := range []string{"", ",", "a,", ",a", "a,,b", "n[1-2", "n1-2]", "n[]", "n[2-1]", "n[a-b]",
		"n[1-]", "n[-1]", "n[1,,2]", "n[[1]]", "n 1", "n[1234567890]", "nöde"} {
		if _, err := ParseHostlist(in); !errors.Is(err, ErrHostlist) {
			t.Errorf("%q: %v, want an error matching ErrHostlist", in, err)
		}
	}
}

func TestHostlistExpandLimit(t *testing.T) {
	hl, err := ParseHostlist("n[0-999999999],m[1-9][1-9]")
	if err != nil {
		t.Fatal(err)
	}
	if hl.First() != "n0" {
		t.Errorf("first %q", hl.First())
	}
	if _, err := hl.Expand(1000); !errors.Is(err, ErrHostlist) {
		t.Errorf("expanding a billion hosts: %v, want an error", err)
	}
	hl, _ = ParseHostlist("m[1-9][1-9][1-9]")
	if _, err := hl.Expand(100); !errors.Is(err, ErrHostlist) {
		t.Errorf("expanding 729 hosts with limit 100: %v, want an error", err)
	}
}

func FuzzHostlist(f *testing.F) {
	for _, s := range []string{"node[01-04,07],gpu[1-2]", "a", "r[1-2]-n[01-02]", "n[", "n[2-1]", "x[0-999999999]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hl, err := ParseHostlist(s)
		if err != nil {
			if !errors.Is(err, ErrHostlist) {
				t.Fatalf("%q: error %v does not match ErrHostlist", s, err)
			}
			return
		}
		first := hl.First()
		if first == "" {
			t.Fatalf("%q parsed but has no first host", s)
		}
		all, err := hl.Expand(64)
		if err != nil {
			return
		}
		if len(all) == 0 || all[0] != first {
			t.Fatalf("%q: first %q, expansion %q", s, first, all)
		}
		for _, h := range all {
			if _, err := ParseHostlist(h); err != nil {
				t.Fatalf("%q: host %q does not parse back: %v", s, h, err)
			}
		}
	})
}
