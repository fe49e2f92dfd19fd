package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/ibisgo/ibis/internal/apptest"
)

func TestMain(m *testing.M) {
	if os.Getenv(apptest.EnvAsMain) == "1" {
		main()
	}
	os.Exit(m.Run())
}

// TestDistributions runs every distribution on a local pool of four processes (the
// program checks the leaves done against a sequential walk of the tree).
func TestDistributions(t *testing.T) {
	for i, d := range distributions {
		algo := []string{"rs", "crs", "trs"}[i%3]
		t.Run(d+"/"+algo, func(t *testing.T) {
			out := apptest.RunJSON(t, nil, "-np", "4", "-sites", "2", "-steal", algo, "-dist", d, "-work", "2", "-timeout", "3m")
			if out.Processes != 4 || out.Result["leaves"] == nil {
				t.Errorf("%v on %d processes", out.Result, out.Processes)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	apptest.Refuses(t, []apptest.Usage{
		{Args: []string{"-dist", "zipf"}, Want: `-dist "zipf": must be one of`},
		{Args: []string{"-dist", "balanced", "-size", "40"}, Want: "-size 40: must be 1 to 24 for balanced"},
		{Args: []string{"-work", "-1"}, Want: "-work -1"},
	})
}

func TestLeaves(t *testing.T) {
	for _, tc := range []struct {
		n    node
		want int64
	}{
		{node{Dist: balanced, Size: 5}, 32},
		{node{Dist: fibTree, Size: 10}, 89},
		{node{Dist: ramp, Size: 10}, 55},
		{node{Dist: comb, Size: 10}, 11},
	} {
		if got := leaves(tc.n); got != tc.want {
			t.Errorf("%s: %d leaves, want %d", fmt.Sprint(tc.n), got, tc.want)
		}
	}
}
