package fsm

import "testing"

type light uint8

const (
	red light = iota
	green
	yellow
)

var lightNames = []string{red: "red", green: "green", yellow: "yellow"}

func (l light) CanMove(next light) bool {
	switch l {
	case red:
		return next == green
	case green:
		return next == yellow
	case yellow:
		return next == red
	}
	return false
}

func TestMove(t *testing.T) {
	l := red
	if !Move(&l, green) || l != green {
		t.Fatalf("red to green: now %v", l)
	}
	if Move(&l, red) || l != green {
		t.Fatalf("green to red was taken: now %v", l)
	}
	if got := Name(lightNames, yellow, "light"); got != "yellow" {
		t.Fatalf("Name(yellow) = %q", got)
	}
	if got := Name(lightNames, light(7), "light"); got != "light(7)" {
		t.Fatalf("Name(7) = %q", got)
	}
}
