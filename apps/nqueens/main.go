// Command nqueens counts every way to place N queens on an N x N board so that none
// attacks another, as divide-and-conquer jobs that idle processes steal (package dc):
// each job places a queen in each free square of its row and spawns the rest of the
// board, down to a depth below which it counts sequentially. The count is checked
// against the published numbers of solutions (OEIS A000170).
package main

import (
	"context"
	"flag"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/ibisgo/ibis/dc"
	"github.com/ibisgo/ibis/internal/dcapp"

	_ "github.com/ibisgo/ibis/impl/mp"  // MPI: -impl mp under mpirun, in a build with -tags mpi
	_ "github.com/ibisgo/ibis/impl/nio" // the gnet event-loop implementation (-impl nio)
	_ "github.com/ibisgo/ibis/impl/tcp" // the TCP implementation (the default)
)

// solutions[n] is the number of ways to place n queens (OEIS A000170), the check.
var solutions = []int64{1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596, 2279184,
	14772512, 95815104, 666090624, 4968057848, 39029188884}

// board is a partly filled board: the columns and diagonals taken by the queens of the
// rows above Row, as bit masks.
type board struct {
	N     int    `msgpack:"n"`
	Row   int    `msgpack:"row"`
	Cols  uint32 `msgpack:"cols"`
	Left  uint32 `msgpack:"left"`  // diagonals going down-left, shifted per row
	Right uint32 `msgpack:"right"` // diagonals going down-right
	Depth int    `msgpack:"depth"` // rows placed by spawning jobs; below, sequentially
}

// free is the set of squares of the board's next row that no queen attacks.
func (b board) free() uint32 { return ^(b.Cols | b.Left | b.Right) & (1<<b.N - 1) }

// place puts a queen on square bit of the next row.
func (b board) place(bit uint32) board {
	return board{N: b.N, Row: b.Row + 1, Cols: b.Cols | bit, Left: (b.Left | bit) << 1, Right: (b.Right | bit) >> 1, Depth: b.Depth}
}

// count is the sequential search.
func (b board) count() int64 {
	if b.Row == b.N {
		return 1
	}
	var n int64
	for f := b.free(); f != 0; f &= f - 1 {
		n += b.place(f & -f).count()
	}
	return n
}

var queensKind *dc.Kind[board, int64]

func init() { queensKind = dc.Define("nqueens", queensJob) }

// queensJob spawns one job per free square of its row, or counts sequentially once its
// row is at the spawning depth.
func queensJob(c *dc.Ctx, b board) int64 {
	if b.Row >= b.Depth || b.Row == b.N {
		return b.count()
	}
	var kids [32]*dc.Future[int64]
	n := 0
	for f := b.free(); f != 0; f &= f - 1 {
		kids[n] = queensKind.Spawn(c, b.place(f&-f))
		n++
	}
	c.Sync()
	var total int64
	for _, k := range kids[:n] {
		total += k.Value()
	}
	return total
}

// queensGo is the same search with a goroutine where queensJob spawns.
func queensGo(b board) int64 {
	if b.Row >= b.Depth || b.Row == b.N {
		return b.count()
	}
	var total atomic.Int64
	var wg sync.WaitGroup
	for f := b.free(); f != 0; f &= f - 1 {
		next := b.place(f & -f)
		wg.Go(func() { total.Add(queensGo(next)) })
	}
	wg.Wait()
	return total.Load()
}

func main() {
	var n, depth int
	dcapp.Main(dcapp.App{
		Name: "nqueens",
		Usage: `usage: nqueens [flags]

Counts the solutions of the N-queens problem by divide-and-conquer over the processes of an
Ibis pool; idle processes steal jobs (see 'go doc ./dc').

  nqueens -n 12                       one process
  nqueens -np 4 -n 15 -steal trs      four local processes, embedded registry
  mpirun -np 4 ./nqueens -impl mp     over MPI (built with -tags mpi)
`,
		Flags: func(fs *flag.FlagSet) {
			fs.IntVar(&n, "n", 12, "the board's size")
			fs.IntVar(&depth, "depth", 4, "rows placed by spawning jobs; the rest of the board is searched sequentially")
		},
		Check: func(map[string]bool) error {
			if n < 1 || n >= len(solutions) {
				return fmt.Errorf("-n %d: must be 1 to %d", n, len(solutions)-1)
			}
			if depth < 0 {
				return fmt.Errorf("-depth %d: must not be negative", depth)
			}
			return nil
		},
		Run: func(ctx context.Context, rt *dc.Runtime) (string, map[string]any, error) {
			got, err := dc.Run(ctx, rt, queensKind, board{N: n, Depth: depth})
			if err != nil {
				return "", nil, err
			}
			return report(n, depth, got)
		},
		Alone: func(ctx context.Context) (string, map[string]any, error) {
			return report(n, depth, queensGo(board{N: n, Depth: depth}))
		},
	})
}

func report(n, depth int, got int64) (string, map[string]any, error) {
	if want := solutions[n]; got != want {
		return "", nil, fmt.Errorf("%d-queens: %d solutions counted, %d published", n, got, want)
	}
	return fmt.Sprintf("%d-queens: %d solutions (checked)", n, got),
		map[string]any{"n": n, "depth": depth, "solutions": got}, nil
}
