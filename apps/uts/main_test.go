package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ibisgo/ibis/internal/dcapp/apptest"
)

func TestMain(m *testing.M) {
	if os.Getenv(apptest.EnvAsMain) == "1" {
		main()
	}
	os.Exit(m.Run())
}

// TestPools searches a published sample tree (T1, checked by the program) and smaller trees
// of both types (checked sequentially) on local pools.
func TestPools(t *testing.T) {
	for _, tc := range []struct {
		impl, algo string
		np         int
		tree       []string
	}{
		{"tcp", "trs", 2, []string{"-tree", "T1"}},
		{"tcp", "rs", 3, []string{"-t", "0", "-b", "200", "-q", "0.124", "-m", "8", "-r", "7"}},
		{"tcp", "crs", 5, []string{"-t", "1", "-a", "2", "-d", "10", "-b", "4", "-r", "3"}},
		{"nio", "crs", 3, []string{"-t", "1", "-a", "3", "-d", "7", "-b", "4", "-r", "19"}},
		{"nio", "trs", 2, []string{"-t", "0", "-b", "100", "-q", "0.2", "-m", "5", "-r", "11"}},
	} {
		t.Run(fmt.Sprintf("%s/%s/np=%d/%s", tc.impl, tc.algo, tc.np, strings.Join(tc.tree, "")), func(t *testing.T) {
			args := append([]string{"-np", fmt.Sprint(tc.np), "-impl", tc.impl, "-steal", tc.algo, "-sites", "2", "-timeout", "3m"}, tc.tree...)
			out := apptest.RunJSON(t, nil, args...)
			if out.Processes != tc.np || out.Result["nodes"] == nil {
				t.Errorf("%v on %d processes", out.Result, out.Processes)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-tree", "T4"}, `-tree "T4": no such sample tree`},
		{[]string{"-tree", "T1", "-b", "3"}, "give a sample tree or a tree of your own"},
		{[]string{"-t", "2"}, "tree type 2"},
		{[]string{"-q", "1.5"}, "probability 1.5"},
		{[]string{"-m", "1000"}, "binomial children 1000"},
		{[]string{"-d", "0"}, "depth 0"},
	} {
		_, stderr, code := apptest.Run(t, nil, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
