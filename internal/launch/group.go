package launch

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Spec says what a group runs: N copies of one program with the same arguments.
type Spec struct {
	// Program is a path ("./worker", "/usr/bin/env") or a name looked up in PATH ("worker").
	Program string
	// Args are the arguments after the program name.
	Args []string
	// N is the number of processes, at least 1. They get launch indexes 0 to N-1.
	N int
}

// Group is a set of running processes supervised as one: when one fails, the others are
// stopped. Create it with Start and always call Wait, which reaps the processes and ends every
// goroutine the group started.
//
// Lock order: mu before a LockedWriter's mu. The group logs under mu (starts, exits,
// signals), and its logger may write to the LockedWriter that its processes' lines go to,
// as ibis-run's does; a LockedWriter never takes mu. The exit and failure functions are
// called without mu.
type Group struct {
	cfg   config
	procs []*proc // by launch index; nil if not started

	mu       sync.Mutex
	statuses []Status
	running  int
	stopping bool        // Stop, Kill or a failure has asked every process to end
	external bool        // Stop or Kill was called while processes were running
	first    *ChildError // the first process that failed on its own

	exits     sync.WaitGroup // one per started process, done when it is reaped
	stopCh    chan struct{}  // closed when stopping starts
	allExited chan struct{}  // closed when every started process is reaped
	supDone   chan struct{}  // closed when the supervisor goroutine ends

	waitOnce sync.Once
	result   []Status
	err      error
}

// proc is one started process and the writers that prefix its output.
type proc struct {
	cmd    *exec.Cmd
	stdout *lineWriter
	stderr *lineWriter
	exited bool
}

// Start starts spec.N copies of the program, in launch order, and returns the group that
// supervises them. If a process fails before all are started, the rest are not started. If
// the program cannot be started at all, Start kills and reaps the processes it already
// started and returns an error matching ErrStart.
func Start(spec Spec, opts ...Option) (*Group, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: nil option", ErrInvalid)
		}
		o(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if spec.N < 1 {
		return nil, fmt.Errorf("%w: %d processes, want at least 1", ErrInvalid, spec.N)
	}
	if spec.Program == "" {
		return nil, fmt.Errorf("%w: empty program name", ErrInvalid)
	}
	path, err := exec.LookPath(spec.Program)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %w", ErrStart, spec.Program, err)
	}

	g := &Group{
		cfg:       cfg,
		procs:     make([]*proc, spec.N),
		statuses:  make([]Status, spec.N),
		stopCh:    make(chan struct{}),
		allExited: make(chan struct{}),
		supDone:   make(chan struct{}),
	}
	for i := range g.statuses {
		g.statuses[i] = Status{Index: i, ExitCode: -1}
	}
	go g.supervise()

	stdout := NewLockedWriter(cfg.stdout)
	stderr := NewLockedWriter(cfg.stderr)
	for i := range spec.N {
		g.mu.Lock()
		if g.stopping {
			g.mu.Unlock()
			cfg.log.Info("not starting the remaining processes: the group is stopping",
				zap.Int("from", i), zap.Int("n", spec.N))
			break
		}
		err := g.startLocked(i, path, spec.Args, stdout, stderr)
		if err != nil {
			g.signalAllLocked(signalKill)
			g.stopping = true
			g.mu.Unlock()
			g.finish()
			return nil, fmt.Errorf("%w: process %d (%s): %w", ErrStart, i, path, err)
		}
		g.mu.Unlock()
	}
	return g, nil
}

// startLocked starts process i. The caller holds g.mu, so that a concurrent failure cannot
// miss a process that is being started.
func (g *Group) startLocked(i int, path string, args []string, stdout, stderr *LockedWriter) error {
	cmd := exec.Command(path, args...)
	cmd.Env = g.cfg.env(i)
	cmd.SysProcAttr = sysProcAttr()
	cmd.WaitDelay = outputDrainDelay
	p := &proc{
		cmd:    cmd,
		stdout: newLineWriter(stdout, i, g.cfg.maxLine),
		stderr: newLineWriter(stderr, i, g.cfg.maxLine),
	}
	cmd.Stdout = p.stdout
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	g.procs[i] = p
	g.running++
	g.statuses[i].Started = true
	g.statuses[i].Pid = cmd.Process.Pid
	g.exits.Add(1)
	go g.await(i, p)
	g.cfg.log.Info("started", zap.Int("rank", i), zap.Int("pid", cmd.Process.Pid),
		zap.String("output prefix", fmt.Sprintf("[%d]", i)))
	return nil
}

// await reaps process i, records its status and stops the group if it is the first failure.
func (g *Group) await(i int, p *proc) {
	defer g.exits.Done()
	waitErr := p.cmd.Wait()
	outErr := p.stdout.Flush()
	errErr := p.stderr.Flush()

	st := Status{Index: i, Started: true, Pid: p.cmd.Process.Pid, ExitCode: -1}
	if ps := p.cmd.ProcessState; ps != nil {
		st.ExitCode = ps.ExitCode()
		st.Signal = exitSignal(ps)
	}
	var exitErr *exec.ExitError
	switch {
	case waitErr == nil, errors.As(waitErr, &exitErr):
		// The status above says it all.
	case errors.Is(waitErr, exec.ErrWaitDelay):
		g.cfg.log.Warn("output pipes stayed open after exit (a background process inherited them?)",
			zap.Int("rank", i))
	default:
		st.Err = waitErr
	}
	if st.Err == nil {
		st.Err = firstErr(outErr, errErr)
	}
	if st.Err != nil {
		st.Err = fmt.Errorf("process %d output: %w", i, st.Err)
	}

	first := g.recordExit(p, st)
	if g.cfg.onExit != nil {
		g.cfg.onExit(st)
	}
	if first != nil && g.cfg.onFailure != nil {
		g.cfg.onFailure(first)
	}
}

// recordExit records the status of a reaped process. If it is the first failure, it starts
// stopping the group and returns the failure.
func (g *Group) recordExit(p *proc, st Status) *ChildError {
	g.mu.Lock()
	defer g.mu.Unlock()
	p.exited = true
	g.running--
	g.statuses[st.Index] = st
	g.cfg.log.Debug("exited", zap.Int("rank", st.Index), zap.Int("pid", st.Pid),
		zap.Int("code", st.Code()), zap.String("how", st.describe()))
	if !st.Failed() || g.stopping {
		return nil
	}
	g.first = &ChildError{Status: st}
	g.cfg.log.Info("process failed; stopping the group", zap.Int("rank", st.Index),
		zap.String("how", st.describe()), zap.Int("running", g.running))
	g.stopLocked()
	return g.first
}

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Stop asks every running process to end (SIGTERM to its process group) and kills the ones
// still running after the grace period. It returns at once; Wait reports the end. Calling it
// more than once, or after a process failed, has no further effect.
func (g *Group) Stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running > 0 && g.first == nil {
		g.external = true
	}
	g.stopLocked()
}

// Kill kills every running process at once (SIGKILL to its process group), without waiting
// for the grace period. It returns at once; Wait reports the end.
func (g *Group) Kill() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running > 0 && g.first == nil {
		g.external = true
	}
	g.markStoppingLocked()
	g.signalAllLocked(signalKill)
}

// stopLocked starts stopping the group: SIGTERM now, SIGKILL later from the supervisor.
func (g *Group) stopLocked() {
	if g.markStoppingLocked() {
		g.signalAllLocked(signalStop)
	}
}

// markStoppingLocked records that the group is stopping and wakes the supervisor. It reports
// whether this call was the first to do so.
func (g *Group) markStoppingLocked() bool {
	if g.stopping {
		return false
	}
	g.stopping = true
	close(g.stopCh)
	return true
}

// signalAllLocked sends sig to every process that has not been reaped yet.
func (g *Group) signalAllLocked(sig os.Signal) {
	for i, p := range g.procs {
		if p == nil || p.exited {
			continue
		}
		if err := signalGroup(p.cmd.Process, sig); err != nil {
			g.cfg.log.Warn("cannot signal process", zap.Int("rank", i), zap.Stringer("signal", sig),
				zap.Error(err))
			continue
		}
		g.cfg.log.Debug("signalled", zap.Int("rank", i), zap.Stringer("signal", sig))
	}
}

// supervise kills the processes that outlive the grace period after the group started
// stopping. It ends when every process is reaped.
func (g *Group) supervise() {
	defer close(g.supDone)
	select {
	case <-g.stopCh:
	case <-g.allExited:
		return
	}
	if g.cfg.grace > 0 {
		t := time.NewTimer(g.cfg.grace)
		defer t.Stop()
		select {
		case <-t.C:
		case <-g.allExited:
			return
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running > 0 {
		g.cfg.log.Info("grace period over; killing the remaining processes",
			zap.Duration("grace", g.cfg.grace), zap.Int("running", g.running))
	}
	g.signalAllLocked(signalKill)
}

// finish waits until every started process is reaped and the supervisor has ended.
func (g *Group) finish() {
	g.exits.Wait()
	close(g.allExited)
	<-g.supDone
}

// Wait waits until every process has ended and returns the status of each, by launch index.
// The error is nil when every process exited with status 0; a *ChildError (matching
// ErrChildFailed) for the first process that failed on its own; an error matching ErrStopped
// when Stop or Kill ended the group first. Wait may be called more than once and from several
// goroutines; all get the same answer.
func (g *Group) Wait() ([]Status, error) {
	g.waitOnce.Do(func() {
		g.finish()
		g.mu.Lock()
		defer g.mu.Unlock()
		g.result = slices.Clone(g.statuses)
		switch {
		case g.first != nil:
			g.err = g.first
		case g.external:
			g.err = ErrStopped
		}
	})
	return slices.Clone(g.result), g.err
}
