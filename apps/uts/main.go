// Command uts runs the Unbalanced Tree Search benchmark (Olivier et al., 2006): it
// counts the nodes of a tree that is generated as it is searched, each node's children
// drawn from a splittable SHA-1 random stream, so that the work is highly irregular and
// unpredictable: the test of a work-stealing runtime's load balance. Each node is a
// divide-and-conquer job (package dc). The sample trees of UTS are checked against their
// published sizes; any other tree with -verify against a sequential search.
package main

import (
	"context"
	"flag"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ibisgo/ibis/dc"
	"github.com/ibisgo/ibis/internal/dcapp"

	_ "github.com/ibisgo/ibis/impl/mp"  // MPI: -impl mp under mpirun, in a build with -tags mpi
	_ "github.com/ibisgo/ibis/impl/nio" // the gnet event-loop implementation (-impl nio)
	_ "github.com/ibisgo/ibis/impl/tcp" // the TCP implementation (the default)
)

// sample is one of UTS's sample trees (sample_trees.sh) with its published size.
type sample struct {
	p     params
	nodes int64
	about string
}

// samples are the geometric and binomial sample trees, about four million nodes each.
var samples = map[string]sample{
	"T1": {params{Type: geometric, Shape: fixed, Depth: 10, B0: 4, Seed: 19}, 4130071, "geometric, fixed branching, depth 10"},
	"T2": {params{Type: geometric, Shape: cyclic, Depth: 16, B0: 6, Seed: 502}, 4117769, "geometric, cyclic branching"},
	"T3": {params{Type: binomial, B0: 2000, Q: 0.124875, M: 8, Seed: 42, Depth: 1}, 4112897, "binomial, depth 1572"},
	"T5": {params{Type: geometric, Shape: linear, Depth: 20, B0: 4, Seed: 34}, 4147582, "geometric, linearly decreasing branching"},
}

// job is a UTS job: the subtree under N of the tree P.
type job struct {
	P params `msgpack:"p"`
	N node   `msgpack:"n"`
}

var utsKind *dc.Kind[job, int64]

func init() { utsKind = dc.Define("uts", utsJob) }

// utsJob counts the nodes under j.N, spawning a job for each child that has children
// of its own. A leaf is counted where it is found: in a binomial tree most nodes are
// leaves, and a job of one node would cost a thief a steal round trip for a single
// SHA-1, and its victim a spawn.
func utsJob(c *dc.Ctx, j job) int64 {
	n := j.P.children(j.N)
	if n == 0 {
		return 1
	}
	var small [8]*dc.Future[int64]
	kids := small[:0]
	if n > len(small) {
		kids = make([]*dc.Future[int64], 0, n)
	}
	total := int64(1)
	for i := range n {
		ch := j.P.child(j.N, i)
		if j.P.children(ch) == 0 {
			total++
			continue
		}
		kids = append(kids, utsKind.Spawn(c, job{j.P, ch}))
	}
	c.Sync()
	for _, k := range kids {
		total += k.Value()
	}
	return total
}

// utsGo is the same search with a goroutine where utsJob spawns (leaves inline too).
func utsGo(p params, nd node) int64 {
	n := p.children(nd)
	var total atomic.Int64
	total.Store(1)
	var wg sync.WaitGroup
	for i := range n {
		child := p.child(nd, i)
		if p.children(child) == 0 {
			total.Add(1)
			continue
		}
		wg.Go(func() { total.Add(utsGo(p, child)) })
	}
	wg.Wait()
	return total.Load()
}

func main() {
	var tree string
	var verify bool
	var p params
	var want int64 // the published size, or -1
	dcapp.Main(dcapp.App{
		Name: "uts",
		Usage: `usage: uts [flags]

The Unbalanced Tree Search benchmark by divide-and-conquer over the processes of an Ibis
pool; idle processes steal jobs (see 'go doc ./dc'). Sample trees (-tree): ` + sampleList() + `.

  uts -tree T1                          one process
  uts -np 4 -tree T3 -steal trs         four local processes, embedded registry
  uts -t 1 -a 3 -d 8 -b 4 -r 7 -verify  a tree of your own, checked sequentially
  mpirun -np 4 ./uts -impl mp -tree T1  over MPI (built with -tags mpi)
`,
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&tree, "tree", "T1", "a sample tree of UTS, checked against its published size")
			fs.BoolVar(&verify, "verify", false, "also count the tree sequentially and require the same size")
			fs.IntVar(&p.Type, "t", geometric, "tree type: 0 binomial, 1 geometric (any tree flag replaces -tree)")
			fs.Float64Var(&p.B0, "b", 4, "the root's branching factor")
			fs.Float64Var(&p.Q, "q", 0.15, "binomial: the probability that a node has children")
			fs.IntVar(&p.M, "m", 4, "binomial: the number of children of a node that has some")
			fs.IntVar(&p.Depth, "d", 6, "geometric: the depth parameter of the shape")
			fs.IntVar(&p.Shape, "a", linear, "geometric shape: 0 linear, 1 exponential decrease, 2 cyclic, 3 fixed")
			fs.IntVar(&p.Seed, "r", 0, "the root's seed")
		},
		Check: func(set map[string]bool) error {
			own := false
			for _, f := range []string{"t", "b", "q", "m", "d", "a", "r"} {
				own = own || set[f]
			}
			want = -1
			switch {
			case own && set["tree"]:
				return fmt.Errorf("-tree %s with tree flags: give a sample tree or a tree of your own", tree)
			case !own:
				s, ok := samples[strings.ToUpper(tree)]
				if !ok {
					return fmt.Errorf("-tree %q: no such sample tree (%s)", tree, sampleList())
				}
				p, want = s.p, s.nodes
			}
			if err := p.check(); err != nil {
				return fmt.Errorf("the tree: %w", err)
			}
			return nil
		},
		Run: func(ctx context.Context, rt *dc.Runtime) (string, map[string]any, error) {
			got, err := dc.Run(ctx, rt, utsKind, job{P: p, N: p.root()})
			if err != nil {
				return "", nil, err
			}
			return report(p, want, verify, got)
		},
		Alone: func(ctx context.Context) (string, map[string]any, error) {
			return report(p, want, verify, utsGo(p, p.root()))
		},
	})
}

// report checks the size of the tree and describes it.
func report(p params, want int64, verify bool, got int64) (string, map[string]any, error) {
	how := "published"
	if want < 0 || verify {
		if seq := p.count(p.root()); want < 0 || seq != want {
			want, how = seq, "counted sequentially"
		}
	}
	if got != want {
		return "", nil, fmt.Errorf("UTS %+v: %d nodes, %s %d", p, got, how, want)
	}
	line := fmt.Sprintf("UTS tree of %d nodes (as %s)", got, how)
	return line, map[string]any{"tree": p, "nodes": got}, nil
}

func sampleList() string {
	var names []string
	for name, s := range samples {
		names = append(names, fmt.Sprintf("%s (%s, %d nodes)", name, s.about, s.nodes))
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
