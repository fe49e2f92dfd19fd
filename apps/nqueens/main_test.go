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

// TestSequentialCounts checks the sequential search against the published counts.
func TestSequentialCounts(t *testing.T) {
	for n := 1; n <= 11; n++ {
		if got := (board{N: n}).count(); got != solutions[n] {
			t.Errorf("%d-queens: %d, published %d", n, got, solutions[n])
		}
	}
}

// TestPools counts on local pools with every algorithm over tcp and nio.
func TestPools(t *testing.T) {
	for _, impl := range []string{"tcp", "nio"} {
		for _, algo := range []string{"rs", "crs", "trs"} {
			for _, np := range []int{2, 5} {
				if impl == "nio" && np == 5 {
					continue
				}
				t.Run(fmt.Sprintf("%s/%s/np=%d", impl, algo, np), func(t *testing.T) {
					out := apptest.RunJSON(t, nil, "-np", fmt.Sprint(np), "-impl", impl, "-steal", algo, "-sites", "2",
						"-n", "11", "-depth", "3", "-timeout", "3m")
					if out.Result["solutions"] != float64(solutions[11]) || out.Processes != np {
						t.Errorf("%v on %d processes", out.Result, out.Processes)
					}
				})
			}
		}
	}
}

func TestBadInput(t *testing.T) {
	apptest.Refuses(t, []apptest.Usage{
		{Args: []string{"-n", "0"}, Want: "-n 0: must be 1 to 20"},
		{Args: []string{"-n", "21"}, Want: "-n 21"},
		{Args: []string{"-depth", "-2"}, Want: "-depth -2"},
	})
}

func TestGoroutines(t *testing.T) {
	out := apptest.RunJSON(t, nil, "-goroutines", "-n", "10")
	if out.Result["solutions"] != float64(solutions[10]) {
		t.Errorf("%v", out.Result)
	}
}
