package main

import (
	"strings"
	"testing"
)

func TestParseVariants(t *testing.T) {
	vs, err := parseVariants("tcp, nio:blocking/blocking,nio:thread/nonblocking,nio")
	if err != nil {
		t.Fatal(err)
	}
	want := []variant{{"tcp", "tcp", "", ""}, {"nio:blocking/blocking", "nio", "blocking", "blocking"},
		{"nio:thread/nonblocking", "nio", "thread", "nonblocking"}, {"nio", "nio", "", ""}}
	if len(vs) != len(want) {
		t.Fatalf("%+v", vs)
	}
	for i := range want {
		if vs[i] != want[i] {
			t.Errorf("variant %d: %+v, want %+v", i, vs[i], want[i])
		}
	}
	if p := vs[2].props(); p[propNioSend] != "thread" || p[propNioReceive] != "nonblocking" || len(vs[0].props()) != 0 {
		t.Errorf("properties %v, %v", p, vs[0].props())
	}
	for _, tc := range []struct{ in, want string }{
		{"", "empty"},
		{"tcp,tcp", "given twice"},
		{"nosuch", "not linked in"},
		{"tcp:blocking/blocking", "nio only"},
		{"nio:blocking", "IMPL:SEND/RECEIVE"},
		{"nio:fast/blocking", "IMPL:SEND/RECEIVE"},
	} {
		if _, err := parseVariants(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
	}
}
