package dc_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/dc"
)

// The kinds of scenario foreign: the root job spawns n jobs of kind test.foreign,
// which only processes outside site "worker" define (a pool of two programs).
var (
	foreignRoot = dc.Define("test.foreignroot", func(c *dc.Ctx, n int) int64 {
		return spawnSum(c, foreign, n)
	})
	foreign *dc.Kind[int, int64]
)

func init() {
	if os.Getenv(envScenario) == "foreign" && os.Getenv("IBIS_SITE") != "worker" {
		foreign = dc.Define("test.foreign", func(c *dc.Ctx, i int) int64 {
			time.Sleep(200 * time.Millisecond) // long enough to be stolen
			return int64(i)
		})
	}
}

// TestForeignJobRefused: a process steals a job of a kind its program does not define.
// It must not crash (it did, on a nil task): it tells the job's owner, whose run fails
// with an error naming the kind, and the thief's run ends too.
func TestForeignJobRefused(t *testing.T) {
	p := newPool(t, "tcp", dc.RS)
	root := p.start("foreign", 8, "")
	worker := p.start("foreign", 8, "worker")
	rerr, werr := root.end(t), worker.end(t)
	if rerr == nil || !strings.Contains(root.errText(), `no kind of job named "test.foreign"`) {
		t.Errorf("the root: %v, want a failed run naming the kind; stderr:\n%s", rerr, root.errText())
	}
	if werr == nil || strings.Contains(worker.errText(), "panic") {
		t.Errorf("the thief: %v, want a failed run, no panic; stderr:\n%s", werr, worker.errText())
	}
}

// napKind waits 300 ms, or until its run stops.
var napKind = dc.Define("test.nap", func(c *dc.Ctx, i int) int64 {
	select {
	case <-time.After(300 * time.Millisecond):
	case <-c.Done():
	}
	return int64(i)
})

// stopRoot spawns n naps.
var stopRoot = dc.Define("test.stoproot", func(c *dc.Ctx, n int) int64 { return spawnSum(c, napKind, n) })

// TestRootStopsRun: the root's Run gets a context that ends a second into a run of
// several seconds. The other process's Run fails with ErrRunStopped, not ErrJobFailed:
// no job failed.
func TestRootStopsRun(t *testing.T) {
	p := newPool(t, "tcp", dc.RS)
	root := p.start("stop", 40, "")
	worker := p.start("stop", 40, "worker")
	if err := root.end(t); err == nil || !strings.Contains(root.errText(), "deadline exceeded") {
		t.Errorf("the root: %v, want its deadline; stderr:\n%s", err, root.errText())
	}
	err := worker.end(t)
	if text := worker.errText(); err == nil || !strings.Contains(text, dc.ErrRunStopped.Error()) || strings.Contains(text, dc.ErrJobFailed.Error()) {
		t.Errorf("the other process: %v, want ErrRunStopped; stderr:\n%s", err, text)
	}
}
