package dc_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ibisgo/ibis/dc"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

// envBusy, set in a child, makes the victim of the stall scenario compute for long.
const envBusy = "DC_TEST_BUSY"

// lineMember, followed by its member ID, is printed by the process the test stops.
const lineMember = "MEMBER "

// quickDeath makes the test's registry declare a silent member dead within seconds, and
// print its events on log: the heartbeat interval (and, where the registry has one, its
// death timeout) short, but not so short that a live process on a loaded machine is
// declared dead.
func quickDeath(log *eventLog) []registry.ServerOption {
	return []registry.ServerOption{registry.WithHeartbeatInterval(2 * time.Second), registry.WithDeathTimeout(6 * time.Second),
		registry.WithEventLog(log)}
}

// eventLog collects the lines of a registry's event log.
type eventLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *eventLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, strings.Split(strings.TrimRight(string(b), "\n"), "\n")...)
	return len(b), nil
}

// waitDied waits until the registry declares member id of pool dead; the death of
// another member first fails the test (a live process declared dead: the registry's
// failure detector, not dc, is then at fault).
func (l *eventLog) waitDied(t *testing.T, pool, id string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		l.mu.Lock()
		lines := l.lines
		l.mu.Unlock()
		for _, line := range lines {
			if !strings.Contains(line, " Died ") {
				continue
			}
			if strings.Contains(line, " "+pool+"/"+id+"@") {
				return
			}
			t.Fatalf("the registry declared a process dead that was not stopped: %s", line)
		}
		if time.Now().After(deadline) {
			t.Fatal("the stopped process was not declared dead within 3 minutes")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// member returns the member ID the process printed (lineMember).
func (pr *proc) member(t *testing.T) string {
	t.Helper()
	pr.mu.Lock()
	defer pr.mu.Unlock()
	for _, l := range pr.lines {
		if id, ok := strings.CutPrefix(l, lineMember); ok {
			return id
		}
	}
	t.Fatal("the process did not print its member ID")
	return ""
}

// The kinds of job of the cut-off scenario ("stall").
var (
	stallRoot *dc.Kind[int, int64]
	stallJob  *dc.Kind[int, int64]
	// victimGone is set in the root process once the victim has been declared dead.
	victimGone atomic.Bool
	rootStall  *dc.Kind[int, int64]
	regLossJob *dc.Kind[int, int64]
	regLoss    *dc.Kind[int, int64]
	workerHeld atomic.Bool // in the worker of regloss: it holds (held) a job
)

func init() {
	// regloss: the root spawns n jobs; the worker steals one; every job waits until
	// the registry is lost (the test closes it), so the run ends without it.
	regLoss = dc.Define("test.regloss", func(c *dc.Ctx, n int) int64 {
		fmt.Println(lineRunning)
		return spawnSum(c, regLossJob, n)
	})
	regLossJob = dc.Define("test.reglossjob", func(c *dc.Ctx, i int) int64 {
		reg := c.Ibis().Registry()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if c.Site() == "worker" && !workerHeld.Swap(true) {
			// Its first job only: later ones may come after the registry is gone.
			if _, err := reg.Elect(ctx, "worker-holds"); err != nil {
				panic(err)
			}
			fmt.Println(lineHolding)
		}
		for {
			if _, err := reg.Sequence(ctx, "poll"); errors.Is(err, ipl.ErrRegistryLost) {
				return int64(i * i)
			} else if ctx.Err() != nil {
				panic("the registry was never lost")
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	// rootstall: the root job spawns two jobs; the worker steals one and waits in it for
	// the end of the run; the root runs the other, which returns a moment after the
	// worker holds its job (after the root is resumed, if it was stopped first).
	rootStall = dc.Define("test.rootstall", func(c *dc.Ctx, depth int) int64 {
		if depth == 0 {
			a, b := rootStall.Spawn(c, 1), rootStall.Spawn(c, 1)
			c.Sync()
			return a.Value() + b.Value()
		}
		reg := c.Ibis().Registry()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if c.Site() == "worker" {
			if _, err := reg.Elect(ctx, "worker-holds"); err != nil {
				panic(err)
			}
			<-c.Done()
			return 0
		}
		if _, err := reg.ElectionResult(ctx, "worker-holds"); err != nil {
			panic(err)
		}
		fmt.Println(lineMember + c.Ibis().Identifier().ID)
		fmt.Println(lineRunning)
		select {
		case <-c.Done():
		case <-time.After(200 * time.Millisecond):
		}
		return 0
	})
	// stall: the root spawns n jobs. The victim steals one, says so and returns it a
	// moment later (after it is resumed, if it was stopped first). The root runs the
	// others once the victim holds its job and has been declared dead, so the run
	// ends without the victim (its job run again by the root when it held it).
	stallRoot = dc.Define("test.stall", func(c *dc.Ctx, n int) int64 {
		return spawnSum(c, stallJob, n)
	})
	stallJob = dc.Define("test.stalljob", func(c *dc.Ctx, i int) int64 {
		reg := c.Ibis().Registry()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if c.Site() == "victim" {
			if _, err := reg.Elect(ctx, "victim-holding"); err != nil {
				panic(err)
			}
			fmt.Println(lineMember + c.Ibis().Identifier().ID)
			fmt.Println(lineHolding)
			if os.Getenv(envBusy) != "" {
				// Computes for long, sending nothing itself: only the probes of a
				// process whose registry is lost can tell it that it is cut off.
				for start := time.Now(); time.Since(start) < 2*time.Minute; {
					f := fibKind.Spawn(c, 0)
					c.Sync()
					_ = f.Value()
				}
			}
			select {
			case <-c.Done():
			case <-time.After(200 * time.Millisecond):
			}
			return int64(i * i)
		}
		if victimGone.Load() {
			return int64(i * i)
		}
		// The election goes with the victim when it is declared dead: wait for it only
		// until it has been seen, then for the victim to leave the membership.
		victim, err := reg.ElectionResult(ctx, "victim-holding")
		if err != nil {
			panic(err)
		}
		for in := true; in; {
			in = false
			for _, m := range reg.Members() {
				in = in || m.ID == victim.ID
			}
			select {
			case <-ctx.Done():
				panic("the victim was never declared dead")
			case <-time.After(10 * time.Millisecond):
			}
		}
		victimGone.Store(true)
		return int64(i * i)
	})
}

// TestCutOffProcessEnds stops a process (SIGSTOP) until the registry declares it dead,
// then resumes it: it must end with ErrCutOff instead of stealing for ever, and the root
// must still print the right result.
//
// In "busy" the resumed process computes a long job that sends nothing: its probes tell
// it that the others have cut it off.
func TestCutOffProcessEnds(t *testing.T) {
	for _, tc := range []struct {
		name string
		algo dc.Algorithm
		busy bool
	}{{"rs", dc.RS, false}, {"crs", dc.CRS, false}, {"busy", dc.RS, true}} {
		t.Run(tc.name, func(t *testing.T) {
			log := &eventLog{}
			p := newPool(t, "tcp", tc.algo, quickDeath(log)...)
			if tc.busy {
				p.env = []string{envBusy + "=1"}
			}
			root := p.start("stall", 2, "")
			victim := p.start("stall", 2, "victim")
			victim.waitLine(t, lineHolding)
			if err := victim.c.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			log.waitDied(t, p.name, victim.member(t))
			if got, _ := root.wait(t); got != 0+1 {
				t.Errorf("root: result %d, want 1", got)
			}
			resumed := time.Now()
			if err := victim.c.Signal(syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			err := victim.endWithin(t, time.Minute)
			t.Logf("the victim ended %v after it was resumed", time.Since(resumed).Round(time.Millisecond))
			if err == nil || !strings.Contains(victim.errText(), dc.ErrCutOff.Error()) {
				t.Errorf("the resumed process ended with %v, stderr:\n%s\nwant a failure naming %q", err, victim.errText(), dc.ErrCutOff)
			}
		})
	}
}

// TestCutOffRootEnds stops the root process until the registry declares it dead: the
// worker ends with ErrRootDied, and the root, resumed, ends with ErrCutOff.
func TestCutOffRootEnds(t *testing.T) {
	log := &eventLog{}
	p := newPool(t, "tcp", dc.RS, quickDeath(log)...)
	root := p.start("rootstall", 0, "")
	worker := p.start("rootstall", 0, "worker")
	root.waitLine(t, lineRunning)
	if err := root.c.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	log.waitDied(t, p.name, root.member(t))
	err := worker.end(t)
	if err == nil || !strings.Contains(worker.errText(), dc.ErrRootDied.Error()) {
		_ = root.c.Signal(syscall.SIGCONT)
		t.Fatalf("the worker ended with %v, stderr %q; want a failure naming %q", err, worker.errText(), dc.ErrRootDied)
	}
	resumed := time.Now()
	if err := root.c.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	err = root.endWithin(t, time.Minute)
	t.Logf("the root ended %v after it was resumed", time.Since(resumed).Round(time.Millisecond))
	if err == nil || !strings.Contains(root.errText(), dc.ErrCutOff.Error()) {
		t.Errorf("the resumed root ended with %v, stderr:\n%s\nwant a failure naming %q", err, root.errText(), dc.ErrCutOff)
	}
}

// TestRegistryLostRunGoesOn closes the registry in the middle of a run: every process
// loses it for good, but all of them still answer, so the run goes on to the right
// result (a registry that is gone alone cuts nobody off).
func TestRegistryLostRunGoesOn(t *testing.T) {
	p := newPool(t, "tcp", dc.RS)
	root := p.start("regloss", 3, "")
	worker := p.start("regloss", 3, "worker")
	root.waitLine(t, lineRunning)
	worker.waitLine(t, lineHolding)
	if err := p.srv.Close(); err != nil {
		t.Fatal(err)
	}
	for name, pr := range map[string]*proc{"root": root, "worker": worker} {
		if got, _ := pr.wait(t); got != 0+1+4 {
			t.Errorf("%s: result %d, want 5", name, got)
		}
	}
}
