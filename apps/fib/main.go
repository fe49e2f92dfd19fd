// Command fib computes Fibonacci numbers by the doubly recursive definition, as
// divide-and-conquer jobs that idle processes steal (package dc): the classic test of
// a work-stealing runtime's spawn cost. The result is checked against an iterative
// computation.
//
//	fib -n 35                        one process
//	fib -np 4 -n 40 -steal trs       four local processes, transitive random stealing
//	fib -goroutines -n 40            the same recursion as goroutines, without Ibis
package main

import (
	"context"
	"flag"
	"fmt"
	"sync"

	"github.com/ibisgo/ibis/dc"
	"github.com/ibisgo/ibis/internal/dcapp"

	_ "github.com/ibisgo/ibis/impl/mp"  // MPI: -impl mp under mpirun, in a build with -tags mpi
	_ "github.com/ibisgo/ibis/impl/nio" // the gnet event-loop implementation (-impl nio)
	_ "github.com/ibisgo/ibis/impl/tcp" // the TCP implementation (the default)
)

// arg is a fib job: fib(N), computed sequentially below the threshold T.
type arg struct {
	N int `msgpack:"n"`
	T int `msgpack:"t"`
}

var fibKind *dc.Kind[arg, int64]

func init() { fibKind = dc.Define("fib", fibJob) }

// fibJob spawns fib(n-1) and computes fib(n-2) itself while the first may be stolen.
func fibJob(c *dc.Ctx, a arg) int64 {
	if a.N < 2 || a.N < a.T {
		return fibSeq(a.N)
	}
	x := fibKind.Spawn(c, arg{a.N - 1, a.T})
	y := fibKind.Call(c, arg{a.N - 2, a.T})
	c.Sync()
	return x.Value() + y
}

// fibGo is the same recursion with a goroutine where fibJob spawns.
func fibGo(n, t int) int64 {
	if n < 2 || n < t {
		return fibSeq(n)
	}
	var x int64
	var wg sync.WaitGroup
	wg.Go(func() { x = fibGo(n-1, t) })
	y := fibGo(n-2, t)
	wg.Wait()
	return x + y
}

func fibSeq(n int) int64 {
	if n < 2 {
		return int64(n)
	}
	return fibSeq(n-1) + fibSeq(n-2)
}

// fibIter is the independent check: fib(n) by iteration.
func fibIter(n int) int64 {
	a, b := int64(0), int64(1)
	for range n {
		a, b = b, a+b
	}
	return a
}

// maxN keeps fib(n) in an int64 and the run finite.
const maxN = 90

func main() {
	var n, threshold int
	dcapp.Main(dcapp.App{
		Name: "fib",
		Usage: `usage: fib [flags]

Fibonacci by doubly recursive divide-and-conquer over the processes of an Ibis pool; idle
processes steal jobs (see 'go doc ./dc').

  fib -n 35                         one process
  fib -np 4 -n 40 -steal trs        four local processes, embedded registry
  ibis-run -np 4 -- fib -n 40       the same under ibis-run
  mpirun -np 4 ./fib -impl mp       over MPI (built with -tags mpi)
`,
		Flags: func(fs *flag.FlagSet) {
			fs.IntVar(&n, "n", 32, "compute fib(n)")
			fs.IntVar(&threshold, "threshold", 0, "compute fib(k) for k below this sequentially, without spawning")
		},
		Check: func(map[string]bool) error {
			if n < 0 || n > maxN {
				return fmt.Errorf("-n %d: must be 0 to %d", n, maxN)
			}
			if threshold < 0 {
				return fmt.Errorf("-threshold %d: must not be negative", threshold)
			}
			return nil
		},
		Run: func(ctx context.Context, rt *dc.Runtime) (string, map[string]any, error) {
			got, err := dc.Run(ctx, rt, fibKind, arg{n, threshold})
			if err != nil {
				return "", nil, err
			}
			return report(n, threshold, got)
		},
		Alone: func(ctx context.Context) (string, map[string]any, error) {
			return report(n, threshold, fibGo(n, threshold))
		},
	})
}

// report checks the result and describes it.
func report(n, threshold int, got int64) (string, map[string]any, error) {
	if want := fibIter(n); got != want {
		return "", nil, fmt.Errorf("fib(%d) = %d, but iteration gives %d", n, got, want)
	}
	return fmt.Sprintf("fib(%d) = %d (checked)", n, got), map[string]any{"n": n, "threshold": threshold, "fib": got}, nil
}
