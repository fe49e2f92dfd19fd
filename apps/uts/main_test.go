package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ibisgo/ibis/internal/apptest"
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
	apptest.Refuses(t, []apptest.Usage{
		{Args: []string{"-tree", "T4"}, Want: `-tree "T4": no such sample tree`},
		{Args: []string{"-tree", "T1", "-b", "3"}, Want: "give a sample tree or a tree of your own"},
		{Args: []string{"-t", "2"}, Want: "tree type 2"},
		{Args: []string{"-q", "1.5"}, Want: "probability 1.5"},
		{Args: []string{"-m", "1000"}, Want: "binomial children 1000"},
		{Args: []string{"-d", "0"}, Want: "depth 0"},
	})
}
