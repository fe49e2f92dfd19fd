// Command loadbal is a synthetic divide-and-conquer load for comparing work-stealing
// algorithms (package dc): five shapes of job tree, each leaf a fixed amount of
// computation, chosen so that idle processes meet work spread in different ways. It
// stands in for the five load distributions of the Jcluster study of transitive random
// stealing (whose shapes that paper does not give; see docs/DC.md). The number of work
// units done is checked against a sequential walk of the same tree.
package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/ibisgo/ibis/dc"
	"github.com/ibisgo/ibis/internal/dcapp"

	_ "github.com/ibisgo/ibis/impl/mp"  // MPI: -impl mp under mpirun, in a build with -tags mpi
	_ "github.com/ibisgo/ibis/impl/nio" // the gnet event-loop implementation (-impl nio)
	_ "github.com/ibisgo/ibis/impl/tcp" // the TCP implementation (the default)
)

// The load distributions.
const (
	// balanced: a complete binary tree of 2^Size leaves; the work is spread evenly.
	balanced = "balanced"
	// fib: the call tree of fib(Size), leaves at fib(1) and fib(0); uneven by the golden
	// ratio at every level.
	fibTree = "fib"
	// ramp: the root spawns Size jobs, job i a balanced tree of i+1 leaves' work spread
	// over log2(i+1) levels: a linear ramp of job sizes.
	ramp = "ramp"
	// comb: a spine of Size jobs, each spawning one leaf and the rest of the spine: work
	// appears one piece at a time, at one process.
	comb = "comb"
	// random: every node has 0 to 4 children, drawn from a hash of its position, down
	// to depth Size: an irregular tree like UTS's.
	random = "random"
)

var distributions = []string{balanced, fibTree, ramp, comb, random}

// node is a job: a subtree of the distribution's tree. Leaf work is Work units.
type node struct {
	Dist  string `msgpack:"d"`
	Size  int    `msgpack:"s"` // the distribution's size parameter, for this subtree
	Pos   uint64 `msgpack:"p"` // the node's position (random), or the leaves (ramp)
	Depth int    `msgpack:"h"`
	Work  int    `msgpack:"w"`
}

// children lists n's children (nil for a leaf).
func (n node) children() []node {
	c := func(size int, pos uint64) node {
		return node{Dist: n.Dist, Size: size, Pos: pos, Depth: n.Depth + 1, Work: n.Work}
	}
	switch n.Dist {
	case balanced:
		if n.Size > 0 {
			return []node{c(n.Size-1, 0), c(n.Size-1, 0)}
		}
	case fibTree:
		if n.Size > 1 {
			return []node{c(n.Size-1, 0), c(n.Size-2, 0)}
		}
	case ramp:
		if n.Depth == 0 {
			kids := make([]node, n.Size)
			for i := range kids {
				kids[i] = c(0, uint64(i+1)) // Pos: the leaves this subtree still holds
			}
			return kids
		}
		if n.Pos > 1 {
			return []node{c(0, n.Pos/2), c(0, n.Pos-n.Pos/2)}
		}
	case comb:
		if n.Size > 0 {
			return []node{c(0, 0), c(n.Size-1, 1)}
		}
		if n.Pos == 1 || n.Depth == 0 {
			return []node{c(0, 0)}
		}
	case random:
		if n.Depth < n.Size {
			k := int(mix(n.Pos) % 5)
			if n.Depth < 2 {
				k = 4 // a root with work enough to start
			}
			kids := make([]node, k)
			for i := range kids {
				kids[i] = c(n.Size, mix(n.Pos*5+uint64(i)+1))
			}
			return kids
		}
	}
	return nil
}

// mix is a 64-bit hash (splitmix64's finaliser): the random tree's positions.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// spin does units of computation (about a microsecond each) and returns a value the
// compiler cannot drop.
func spin(units int) uint64 {
	x := uint64(units) | 1
	for range units * 300 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// sink keeps spin from being optimised away.
var sink atomic.Int64

var loadKind *dc.Kind[node, int64]

func init() { loadKind = dc.Define("loadbal", loadJob) }

// loadJob does a leaf's work, or spawns the children: it returns the leaves done.
func loadJob(c *dc.Ctx, n node) int64 {
	kids := n.children()
	if len(kids) == 0 {
		if spin(n.Work) == 0 {
			sink.Add(1) // never: a xorshift state is never 0
		}
		return 1
	}
	fs := make([]*dc.Future[int64], len(kids))
	for i, k := range kids {
		fs[i] = loadKind.Spawn(c, k)
	}
	c.Sync()
	var total int64
	for _, f := range fs {
		total += f.Value()
	}
	return total
}

// leaves counts n's leaves sequentially, without the work: the check.
func leaves(n node) int64 {
	kids := n.children()
	if len(kids) == 0 {
		return 1
	}
	var total int64
	for _, k := range kids {
		total += leaves(k)
	}
	return total
}

func main() {
	var dist string
	var size, work int
	dcapp.Main(dcapp.App{
		Name: "loadbal",
		Usage: `usage: loadbal [flags]

A synthetic divide-and-conquer load of one of five shapes (` + strings.Join(distributions, ", ") + `), for
comparing the steal algorithms (see docs/DC.md).

  loadbal -np 16 -dist comb -size 400 -steal trs -stats
`,
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&dist, "dist", balanced, "the load distribution: "+strings.Join(distributions, ", "))
			fs.IntVar(&size, "size", 0, "the distribution's size (0: about 4096 leaves)")
			fs.IntVar(&work, "work", 50, "work units (about a microsecond each) per leaf")
		},
		Check: func(map[string]bool) error {
			defaults := map[string]int{balanced: 12, fibTree: 18, ramp: 90, comb: 4096, random: 9}
			def, ok := defaults[dist]
			if !ok {
				return fmt.Errorf("-dist %q: must be one of %s", dist, strings.Join(distributions, ", "))
			}
			if size == 0 {
				size = def
			}
			limits := map[string]int{balanced: 24, fibTree: 35, ramp: 1 << 14, comb: 1 << 16, random: 14}
			if size < 1 || size > limits[dist] {
				return fmt.Errorf("-size %d: must be 1 to %d for %s", size, limits[dist], dist)
			}
			if work < 0 || work > 1e6 {
				return fmt.Errorf("-work %d: must be 0 to 1000000", work)
			}
			return nil
		},
		Run: func(ctx context.Context, rt *dc.Runtime) (string, map[string]any, error) {
			root := node{Dist: dist, Size: size, Work: work}
			got, err := dc.Run(ctx, rt, loadKind, root)
			if err != nil {
				return "", nil, err
			}
			if want := leaves(root); got != want {
				return "", nil, fmt.Errorf("%s tree: %d leaves done, %d in the tree", dist, got, want)
			}
			return fmt.Sprintf("%s load: %d leaves of %d units (checked)", dist, got, work),
				map[string]any{"dist": dist, "size": size, "work": work, "leaves": got}, nil
		},
	})
}
