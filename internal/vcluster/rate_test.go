package vcluster

import (
	"errors"
	"testing"
)

func TestParseRate(t *testing.T) {
	good := map[string]uint64{"1gbit": 1e9, "2.5mbit": 2.5e6, "8kbit": 8000, "100000bit": 1e5, " 10MBit ": 1e7}
	for s, want := range good {
		if got, err := ParseRate(s); err != nil || got != want {
			t.Errorf("ParseRate(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "1", "gbit", "1gb", "-1mbit", "1kbit", "NaNmbit", "infgbit", "0x10mbit", "1e30gbit", "1_0mbit"} {
		if _, err := ParseRate(s); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseRate(%q): %v, want ErrInvalid", s, err)
		}
	}
}

// FuzzParseRate checks that any input gives a rate in range or ErrInvalid, never a panic.
func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"1gbit", "2.5mbit", "8kbit", "x", "1e3kbit", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRate(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("ParseRate(%q): %v is not ErrInvalid", s, err)
			}
			return
		}
		if r < 8000 || r > 1e13 {
			t.Fatalf("ParseRate(%q) = %d, out of range", s, r)
		}
	})
}
