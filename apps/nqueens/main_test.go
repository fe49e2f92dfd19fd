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
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-n", "0"}, "-n 0: must be 1 to 20"},
		{[]string{"-n", "21"}, "-n 21"},
		{[]string{"-depth", "-2"}, "-depth -2"},
	} {
		_, stderr, code := apptest.Run(t, nil, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

func TestGoroutines(t *testing.T) {
	out := apptest.RunJSON(t, nil, "-goroutines", "-n", "10")
	if out.Result["solutions"] != float64(solutions[10]) {
		t.Errorf("%v", out.Result)
	}
}
