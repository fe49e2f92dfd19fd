package core

import (
	"slices"
	"strings"
	"testing"
)

func TestRouteFieldsRoundTrip(t *testing.T) {
	key := strings.Repeat("ab", routeKeySize)
	cases := []routeInfo{
		{addrs: "10.0.0.1:4000"},
		{addrs: "10.0.0.1:4000,10.0.1.1:4000", hubs: []string{"10.9.0.1:7700"}, key: key},
		{addrs: "192.168.3.2:4000", hubs: []string{"10.9.0.1:7700", "[2001:db8::1]:7700"}, key: key, closed: true},
	}
	for _, want := range cases {
		published := want.addrs + want.suffix()
		got := parseRoutes(published)
		if got.addrs != want.addrs || got.key != want.key || got.closed != want.closed || !slices.Equal(got.hubs, want.hubs) {
			t.Errorf("parseRoutes(%q) = %+v, want %+v", published, got, want)
		}
	}
}

func TestParseRoutesIgnoresWhatItDoesNotKnow(t *testing.T) {
	key := strings.Repeat("0f", routeKeySize)
	cases := map[string]routeInfo{
		"a:1":                                    {addrs: "a:1"},
		"mpi:3":                                  {addrs: "mpi:3"},
		"a:1;future=x;closed":                    {addrs: "a:1", closed: true},
		"a:1;hubs=h:2":                           {addrs: "a:1"}, // no key: no hub can find it
		"a:1;hubs=h:2;key=XYZ":                   {addrs: "a:1"},
		"a:1;hubs=h:2|nohostport|;key=" + key:    {addrs: "a:1", hubs: []string{"h:2"}, key: key},
		"a:1;key=" + key:                         {addrs: "a:1", key: key},
		"a:1;hubs=" + strings.Repeat("h:2|", 20): {addrs: "a:1"},
	}
	for in, want := range cases {
		got := parseRoutes(in)
		if got.addrs != want.addrs || got.key != want.key || got.closed != want.closed || !slices.Equal(got.hubs, want.hubs) {
			t.Errorf("parseRoutes(%q) = %+v, want %+v", in, got, want)
		}
	}
	many := parseRoutes("a:1;hubs=" + strings.Repeat("h:2|", 20) + ";key=" + key)
	if len(many.hubs) != maxHubs {
		t.Errorf("%d hubs kept of 20, want at most %d", len(many.hubs), maxHubs)
	}
}

func TestCheckHubs(t *testing.T) {
	if err := checkHubs([]string{"h1:7700", "[::1]:7700"}); err != nil {
		t.Errorf("valid hubs refused: %v", err)
	}
	for _, bad := range [][]string{{"h1"}, {"h1:7700;closed"}, {"a:1|b:2"}, slices.Repeat([]string{"h:1"}, maxHubs+1)} {
		if err := checkHubs(bad); err == nil {
			t.Errorf("checkHubs(%q) accepted", bad)
		}
	}
}

func FuzzParseRoutes(f *testing.F) {
	f.Add("10.0.0.1:4000;hubs=h:1|g:2;key=" + strings.Repeat("ab", routeKeySize) + ";closed")
	f.Add("a:1;;;hubs=;key=")
	f.Fuzz(func(t *testing.T, s string) {
		info := parseRoutes(s)
		if len(info.hubs) > maxHubs || info.key != "" && !validKey(info.key) {
			t.Fatalf("parseRoutes(%q) = %+v", s, info)
		}
		again := parseRoutes(info.addrs + info.suffix())
		if !slices.Equal(again.hubs, info.hubs) || len(info.hubs) > 0 && (again.key != info.key || again.closed != info.closed) {
			t.Fatalf("round trip of %q: %+v then %+v", s, info, again)
		}
	})
}
