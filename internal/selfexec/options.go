package selfexec

import (
	"io"
	"os/exec"
	"syscall"
	"time"
)

// DefaultWaitDelay bounds how long Wait waits, after the child has exited or been signalled
// at the end of its context, for its output to be copied: a grandchild that inherited the
// pipes could otherwise block Wait forever.
const DefaultWaitDelay = 10 * time.Second

// NoTests is the argument that makes a test binary run no tests: a child that is given it
// and whose TestMain misses the child role does nothing instead of running the suite again.
const NoTests = "-test.run=^$"

// Option configures Start and Run, so that the common child (this binary, captured output)
// needs none.
type Option func(*config)

type config struct {
	program    string
	launcher   []string
	env        []string
	dropPrefix []string
	stdout     io.Writer
	stderr     io.Writer
	stdoutPipe bool
	combined   bool
	stdinPipe  bool
	waitDelay  time.Duration
	start      func(*exec.Cmd) error
	deathSig   syscall.Signal
}

// WithEnv adds "KEY=value" entries to the child's environment, after the inherited ones so
// that they win: the marker that makes the child take its role, its pool, its index.
func WithEnv(kv ...string) Option {
	return func(c *config) { c.env = append(c.env, kv...) }
}

// WithoutEnv leaves the inherited variables whose names start with one of the prefixes out
// of the child's environment. WithoutEnv("IBIS_") keeps a pool that the parent runs in (as
// under ibis-run) from leaking into a child that must make its own.
func WithoutEnv(prefixes ...string) Option {
	return func(c *config) { c.dropPrefix = append(c.dropPrefix, prefixes...) }
}

// WithProgram runs the executable at path instead of the running one, for a program built
// by the test.
func WithProgram(path string) Option {
	return func(c *config) { c.program = path }
}

// WithLauncher runs the child under a launcher: the process started is launcher with args,
// then the child's executable and arguments (mpirun -np 4 ... ./pkg.test -test.run=...).
// SIGTERM at the end of the context goes to the launcher, which passes it on.
func WithLauncher(launcher string, args ...string) Option {
	return func(c *config) { c.launcher = append([]string{launcher}, args...) }
}

// WithStdout sends the child's standard output to w instead of capturing it.
func WithStdout(w io.Writer) Option {
	return func(c *config) { c.stdout = w }
}

// WithStderr sends the child's standard error to w instead of capturing it.
func WithStderr(w io.Writer) Option {
	return func(c *config) { c.stderr = w }
}

// WithCombinedOutput gives the child one pipe for its standard output and error, as
// exec.Cmd.CombinedOutput does, so that Child.Output holds their lines in the order the child
// wrote them, whole; Stdout and Stderr are then empty. Options that take a stream win.
func WithCombinedOutput() Option {
	return func(c *config) { c.combined = true }
}

// WithStdoutPipe makes the child's standard output readable from Child.StdoutPipe, for a
// parent that waits for the child's lines (the address it listens on). Unlike
// exec.Cmd.StdoutPipe the pipe stays readable after the child exited, until Close.
func WithStdoutPipe() Option {
	return func(c *config) { c.stdoutPipe = true }
}

// WithStdinPipe gives the child a standard input that the parent writes through
// Child.StdinPipe, for a child that waits for orders.
func WithStdinPipe() Option {
	return func(c *config) { c.stdinPipe = true }
}

// WithWaitDelay sets how long Wait waits for the child's output after it exited or was
// signalled at the end of its context (default DefaultWaitDelay); after it the child is
// killed and its pipes closed.
func WithWaitDelay(d time.Duration) Option {
	return func(c *config) { c.waitDelay = d }
}

// WithStart replaces exec.Cmd.Start as the way the child's process is started, for a
// launcher that must start it in a particular context (internal/applaunch binds the
// thread to one CPU, so that the child inherits the binding). start runs on an OS thread
// locked to it, which other goroutines use again once the child has been reaped: what
// start changes in the thread's state it must set back. start must call cmd.Start or
// fail.
func WithStart(start func(cmd *exec.Cmd) error) Option {
	return func(c *config) { c.start = start }
}

// WithParentDeathSignal has the kernel send sig to the child when this process dies,
// even by SIGKILL, so that a killed launcher leaves no process running on its own
// (Linux; elsewhere the option does nothing). Stopping the child on purpose is still the
// context's job.
func WithParentDeathSignal(sig syscall.Signal) Option {
	return func(c *config) { c.deathSig = sig }
}
