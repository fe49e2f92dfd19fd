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

// TestPools runs fib on local pools of 1, 2, 3 and 5 processes in two emulated sites with
// every steal algorithm (tcp; nio at 3 processes), and requires the checked result and a
// report of every process that accounts for every job.
func TestPools(t *testing.T) {
	const n = 24
	for _, impl := range []string{"tcp", "nio"} {
		for _, algo := range []string{"rs", "crs", "trs"} {
			for _, np := range []int{1, 2, 3, 5} {
				if impl == "nio" && np != 3 {
					continue
				}
				t.Run(fmt.Sprintf("%s/%s/np=%d", impl, algo, np), func(t *testing.T) {
					out := apptest.RunJSON(t, nil, "-np", fmt.Sprint(np), "-impl", impl, "-steal", algo, "-sites", "2",
						"-n", fmt.Sprint(n), "-timeout", "3m")
					if got := out.Result["fib"]; got != float64(fibIter(n)) {
						t.Errorf("fib(%d) = %v, want %d", n, got, fibIter(n))
					}
					if out.Processes != np || out.Impl != impl || out.Statistics.Algorithm != algo {
						t.Errorf("ran on %d processes over %s with %s, want %d over %s with %s",
							out.Processes, out.Impl, out.Statistics.Algorithm, np, impl, algo)
					}
					if tot := out.Statistics.Total; tot.Spawned != tot.Executed {
						t.Errorf("%d jobs spawned, %d executed", tot.Spawned, tot.Executed)
					}
				})
			}
		}
	}
}

func TestGoroutinesAndThreshold(t *testing.T) {
	out := apptest.RunJSON(t, nil, "-goroutines", "-n", "25", "-threshold", "10")
	if out.Result["fib"] != float64(fibIter(25)) {
		t.Errorf("goroutines: %v", out.Result)
	}
	out = apptest.RunJSON(t, nil, "-np", "2", "-n", "30", "-threshold", "15")
	if out.Result["fib"] != float64(fibIter(30)) {
		t.Errorf("threshold: %v", out.Result)
	}
}

func TestBadInput(t *testing.T) {
	apptest.Refuses(t, []apptest.Usage{
		{Args: []string{"-n", "-1"}, Want: "-n -1: must be 0 to 90"},
		{Args: []string{"-n", "91"}, Want: "-n 91"},
		{Args: []string{"-steal", "ws"}, Want: `steal algorithm "ws"`},
		{Args: []string{"-np", "2", "-impl", "mp"}, Want: "MPI processes are started by mpirun"},
		{Args: []string{"-goroutines", "-np", "2"}, Want: "the goroutine baseline runs in one process"},
		{Args: []string{"extra"}, Want: `unexpected argument "extra"`},
		{Args: []string{"-progress", "-1s"}, Want: "-progress -1s: must not be negative"},
	})
}

// TestProgress: the root prints progress lines on stderr while the run goes on, and
// -progress 0 turns them off.
func TestProgress(t *testing.T) {
	args := []string{"-np", "2", "-n", "34", "-threshold", "20", "-progress", "1ms"}
	_, stderr, code := apptest.Run(t, nil, args...)
	if code != 0 || !strings.Contains(stderr, "fib: ") || !strings.Contains(stderr, "the root (rank ") {
		t.Errorf("exit %d, stderr without a progress line:\n%s", code, stderr)
	}
	_, stderr, code = apptest.Run(t, nil, append(args, "-progress", "0")...)
	if code != 0 || stderr != "" {
		t.Errorf("-progress 0: exit %d, stderr:\n%s", code, stderr)
	}
}

func TestFibIter(t *testing.T) {
	for n := range 30 {
		if fibIter(n) != fibSeq(n) {
			t.Fatalf("fib(%d): iteration %d, recursion %d", n, fibIter(n), fibSeq(n))
		}
	}
}
