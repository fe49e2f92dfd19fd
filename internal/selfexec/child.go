package selfexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
)

// ErrInvalid reports an option value that cannot work, such as an empty program path.
var ErrInvalid = errors.New("selfexec: invalid argument")

// Child is a started child process. Wait (or Close) must be called: it reaps the process and
// ends the goroutine that waits for it.
type Child struct {
	cmd    *exec.Cmd
	stdout *lockedBuffer // captured standard output, nil when the caller took it
	stderr *lockedBuffer // captured standard error, nil when the caller took it
	output *lockedBuffer // both, in the order written
	pipe   *os.File      // read end of WithStdoutPipe's pipe
	stdin  io.WriteCloser

	done      chan struct{} // closed when the child is reaped
	err       error         // cmd.Wait's result, set before done is closed
	closeOnce sync.Once
}

// Start starts the child with args and returns once it runs. When ctx ends the child gets
// SIGTERM (and SIGKILL after the wait delay).
func Start(ctx context.Context, args []string, opts ...Option) (*Child, error) {
	cfg := config{waitDelay: DefaultWaitDelay}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if cfg.program == "" {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("selfexec: finding this executable: %w", err)
		}
		cfg.program = self
	}
	if cfg.waitDelay < 0 {
		return nil, fmt.Errorf("%w: negative wait delay %v", ErrInvalid, cfg.waitDelay)
	}
	argv := append(append(append([]string(nil), cfg.launcher...), cfg.program), args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = environ(os.Environ(), cfg.dropPrefix, cfg.env)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = cfg.waitDelay
	c := &Child{cmd: cmd, output: &lockedBuffer{}, done: make(chan struct{})}

	var pipeW *os.File
	switch {
	case cfg.stdoutPipe:
		r, w, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("selfexec: stdout pipe: %w", err)
		}
		c.pipe, pipeW, cmd.Stdout = r, w, w
	case cfg.stdout != nil:
		cmd.Stdout = cfg.stdout
	case cfg.combined:
		cmd.Stdout = c.output
	default:
		c.stdout = &lockedBuffer{}
		cmd.Stdout = &teeWriter{c.stdout, c.output}
	}
	switch {
	case cfg.stderr != nil:
		cmd.Stderr = cfg.stderr
	case cfg.combined:
		cmd.Stderr = c.output // the same writer as Stdout: exec gives the child one pipe
	default:
		c.stderr = &lockedBuffer{}
		cmd.Stderr = &teeWriter{c.stderr, c.output}
	}
	if cfg.stdinPipe {
		w, err := cmd.StdinPipe()
		if err != nil {
			c.closePipes(pipeW)
			return nil, fmt.Errorf("selfexec: stdin pipe: %w", err)
		}
		c.stdin = w
	}
	start := cfg.start
	if start == nil {
		start = (*exec.Cmd).Start
	}
	if cfg.deathSig != 0 {
		setDeathSignal(cmd, cfg.deathSig)
	}
	// One goroutine, locked to its OS thread, starts, waits for and reaps the child. The
	// kernel sends the parent-death signal when the thread that forked the child ends,
	// not the process, and Go ends a thread only when a goroutine locked to it exits
	// locked: no other goroutine can take this one while the child lives. Once it is
	// reaped the thread is unlocked, not ended, as a child forked by an unlocked thread
	// elsewhere in the process (internal/launch) may depend on.
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := start(cmd); err != nil {
			started <- err
			return
		}
		started <- nil
		c.err = cmd.Wait()
		close(c.done)
	}()
	err := <-started
	if pipeW != nil {
		_ = pipeW.Close() // the child has its copy; EOF comes when it (and its children) exit
	}
	if err != nil {
		c.closePipes(nil)
		return nil, fmt.Errorf("selfexec: starting %s: %w", argv[0], err)
	}
	return c, nil
}

// Run starts the child and waits for it. The error is Start's, or Wait's (an
// *exec.ExitError when the child failed); the Child tells the exit code and the output.
func Run(ctx context.Context, args []string, opts ...Option) (*Child, error) {
	c, err := Start(ctx, args, opts...)
	if err != nil {
		return nil, err
	}
	err = c.Wait()
	c.closePipes(nil)
	return c, err
}

// environ is base without the entries whose names start with one of drop, then add. GORACE
// gets atexit_sleep_ms=0 in front of the parent's own settings.
func environ(base, drop, add []string) []string {
	env := []string{"GORACE=atexit_sleep_ms=0 " + os.Getenv("GORACE")}
	for _, kv := range base {
		if strings.HasPrefix(kv, "GORACE=") || hasAnyPrefix(kv, drop) {
			continue
		}
		env = append(env, kv)
	}
	return append(env, add...)
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// Wait waits until the child has exited and its output is copied, and returns exec.Cmd's
// Wait error: nil, an *exec.ExitError, or exec.ErrWaitDelay. It may be called more than once
// and from several goroutines.
func (c *Child) Wait() error {
	<-c.done
	return c.err
}

// Done is closed when the child has been reaped; Wait then returns at once.
func (c *Child) Done() <-chan struct{} { return c.done }

// Signal sends sig to the child. A child that already exited is not an error.
func (c *Child) Signal(sig os.Signal) error {
	err := c.cmd.Process.Signal(sig)
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}

// Kill kills the child (SIGKILL) and waits until it is reaped; it returns Wait's error.
func (c *Child) Kill() error {
	_ = c.Signal(os.Kill)
	return c.Wait()
}

// Close kills the child if it still runs, reaps it and closes the pipes; for the cleanup of
// a test, whatever state the child is in. It may be called more than once.
func (c *Child) Close() {
	_ = c.Kill()
	c.closePipes(nil)
}

func (c *Child) closePipes(extra *os.File) {
	c.closeOnce.Do(func() {
		if c.pipe != nil {
			_ = c.pipe.Close()
		}
		if c.stdin != nil {
			_ = c.stdin.Close()
		}
		if extra != nil {
			_ = extra.Close()
		}
	})
}

// Pid is the child's process id.
func (c *Child) Pid() int { return c.cmd.Process.Pid }

// ProcessState is the child's final state, nil until Done is closed.
func (c *Child) ProcessState() *os.ProcessState {
	select {
	case <-c.done:
		return c.cmd.ProcessState
	default:
		return nil
	}
}

// ExitCode is the child's exit status: -1 while it runs, when a signal ended it, or when c is
// nil (Run could not start it).
func (c *Child) ExitCode() int {
	if c == nil {
		return -1
	}
	if ps := c.ProcessState(); ps != nil {
		return ps.ExitCode()
	}
	return -1
}

// StdoutPipe is the read end of the child's standard output with WithStdoutPipe, nil
// without. Close closes it.
func (c *Child) StdoutPipe() io.Reader {
	if c.pipe == nil {
		return nil
	}
	return c.pipe
}

// StdinPipe is the write end of the child's standard input with WithStdinPipe, nil without.
// Closing it gives the child end of file.
func (c *Child) StdinPipe() io.WriteCloser { return c.stdin }

// Stdout is the standard output captured so far ("" when the caller took it). A nil Child
// (Run could not start it) has no output, so that a failure message can always ask for it.
func (c *Child) Stdout() string {
	if c == nil {
		return ""
	}
	return c.stdout.String()
}

// Stderr is the standard error captured so far ("" when the caller took it, or c is nil).
func (c *Child) Stderr() string {
	if c == nil {
		return ""
	}
	return c.stderr.String()
}

// Output is the captured standard output and error so far, for a failure message. Each is
// in the order written, but the two are copied separately (lines of one may come before
// earlier lines of the other, or inside them) unless WithCombinedOutput joined them.
func (c *Child) Output() string {
	if c == nil {
		return ""
	}
	return c.output.String()
}

// lockedBuffer is a buffer that the child's output copier writes while the parent reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far; a nil buffer holds nothing.
func (b *lockedBuffer) String() string {
	if b == nil {
		return ""
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// teeWriter writes to one stream's buffer and the combined one.
type teeWriter struct{ one, all *lockedBuffer }

func (t *teeWriter) Write(p []byte) (int, error) {
	_, _ = t.all.Write(p)
	return t.one.Write(p)
}
