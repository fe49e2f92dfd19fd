package hub

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestParseHubs(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"  ", nil},
		{"h1:7700", []string{"h1:7700"}},
		{"h1:7700, 10.0.0.2:7701 ,[::1]:7702", []string{"h1:7700", "10.0.0.2:7701", "[::1]:7702"}},
	} {
		got, err := ParseHubs(c.in)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	var many []string
	for i := range MaxHubs + 1 {
		many = append(many, fmt.Sprintf("h%d:1", i))
	}
	if _, err := ParseHubs(strings.Join(many[:MaxHubs], ",")); err != nil {
		t.Errorf("%d hubs: %v", MaxHubs, err)
	}
	for _, bad := range []string{"h1", "h1:", ":7700", "h1:0", "h1:70000", "h1:x", "h1:1,h1:1", "h1:1,,h2:2",
		strings.Join(many, ","), strings.Repeat("h", 300) + ":1"} {
		if got, err := ParseHubs(bad); err == nil {
			t.Errorf("%q: accepted as %q", bad, got)
		}
	}
}
