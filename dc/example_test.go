package dc_test

import (
	"context"
	"fmt"
	"log"

	"github.com/ibisgo/ibis/dc"
	"github.com/ibisgo/ibis/ipl"
)

// A kind of job: the sum of 1..n, by halves. Define kinds at package level (in an init
// function when the job spawns its own kind), so that every process of the pool knows
// them by name.
var rangeSum *dc.Kind[[2]int, int]

func init() {
	rangeSum = dc.Define("example.rangesum", func(c *dc.Ctx, r [2]int) int {
		lo, hi := r[0], r[1]
		if hi-lo < 1000 {
			s := 0
			for i := lo; i <= hi; i++ {
				s += i
			}
			return s
		}
		mid := (lo + hi) / 2
		left := rangeSum.Spawn(c, [2]int{lo, mid}) // may be stolen by an idle process
		right := rangeSum.Call(c, [2]int{mid + 1, hi})
		c.Sync() // waits for left, running it here unless it was stolen
		return left.Value() + right
	})
}

// Every process of the pool runs the same program: New and Run on each; the root runs the
// root job, the others steal, and all get the result. Here, a pool of one.
func ExampleRun() {
	ctx := context.Background()
	ib, err := ipl.New(ctx, append(dc.IbisOptions(), ipl.WithImplementation("tcp"), ipl.WithPoolSize(1))...)
	if err != nil {
		log.Fatal(err)
	}
	defer ib.Close()
	rt, err := dc.New(ctx, ib, dc.WithAlgorithm(dc.TRS))
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()
	sum, err := dc.Run(ctx, rt, rangeSum, [2]int{1, 1000000})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sum, rt.Root())
	// Output: 500000500000 true
}
