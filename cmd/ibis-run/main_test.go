package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ibisgo/ibis/internal/poolauth"
	"github.com/ibisgo/ibis/internal/tlsconf"
	"github.com/ibisgo/ibis/registry"
)

// The test binary is also the PROGRAM that ibis-run starts: with envMode set, TestMain runs
// the named child behaviour instead of the tests.
const (
	envMode   = "IBIS_RUN_TEST_MODE"
	envCode   = "IBIS_RUN_TEST_CODE"
	envFailer = "IBIS_RUN_TEST_FAILER"
	envAddr   = "IBIS_RUN_TEST_ADDR"
	// envJoin makes the "trust" child join the pool after its checks: "yes" with the
	// secret and certificate it was given, "bare" without them.
	envJoin = "IBIS_RUN_TEST_JOIN"
	// envMain makes the test binary ibis-run itself, main and all (signals, exit status),
	// with its arguments as ibis-run's; its processes are started in envMode's role.
	envMain = "IBIS_RUN_TEST_MAIN"
)

func TestMain(m *testing.M) {
	if os.Getenv(envMain) != "" {
		os.Unsetenv(envMain) // the processes it starts are PROGRAM, not ibis-run again
		main()
	}
	if mode := os.Getenv(envMode); mode != "" {
		os.Exit(childMain(mode))
	}
	// The race detector pauses one second before a race-enabled child exits; not needed here.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	goleak.VerifyTestMain(m)
}

// envKeys are the variables ibis-run sets, printed by the "env" child.
var envKeys = []string{"IBIS_REGISTRY", "IBIS_POOL", "IBIS_POOL_SIZE", "IBIS_IMPL", "IBIS_RANK", "IBIS_HEARTBEAT", "IBIS_DEATH_TIMEOUT"}

func childMain(mode string) int {
	switch mode {
	case "env":
		for _, k := range envKeys {
			if v, ok := os.LookupEnv(k); ok {
				fmt.Printf("%s=%s\n", k, v)
			} else {
				fmt.Printf("%s unset\n", k)
			}
		}
		return 0
	case "lines":
		rank := os.Getenv("IBIS_RANK")
		fmt.Printf("out %s a\nout %s b\n", rank, rank)
		fmt.Fprintf(os.Stderr, "err %s\n", rank)
		fmt.Printf("tail %s", rank) // no newline at the end
		return 0
	case "join":
		return joinChild()
	case "trust":
		return trustChild()
	case "exit":
		code, _ := strconv.Atoi(os.Getenv(envCode))
		return code
	case "selfkill":
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // not reached
	case "chatter":
		return chatter()
	case "sleep":
		time.Sleep(time.Hour) // until stopped
		return 0
	case "fail-or-sleep":
		if os.Getenv("IBIS_RANK") == os.Getenv(envFailer) {
			return failAfterGoAhead()
		}
		fmt.Printf("ready %d\n", os.Getpid())
		time.Sleep(time.Hour) // until ibis-run stops this process
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown child mode", mode)
	return 99
}

// joinChild joins the pool named by the environment at the registry named by it, waits until
// every process has joined, and reports what it saw.
func joinChild() int { return joinPool() }

// joinPool is joinChild with options for Join.
func joinPool(opts ...registry.Option) int {
	size, err := strconv.Atoi(os.Getenv("IBIS_POOL_SIZE"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "IBIS_POOL_SIZE:", err)
		return 90
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := registry.Join(ctx, os.Getenv("IBIS_REGISTRY"), os.Getenv("IBIS_POOL"), append(opts, registry.WithPoolSize(size))...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "join:", err)
		return 91
	}
	defer c.Close()
	if err := c.WaitUntilPoolClosed(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "wait until pool closed:", err)
		return 92
	}
	// A pool-wide sequence number proves that all processes share one pool at one server
	// (membership itself changes as soon as the first process leaves).
	seq, err := c.Sequence(ctx, "ibis-run-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, "sequence:", err)
		return 94
	}
	fmt.Printf("pool size %d heartbeat %v sequence %d\n", c.PoolSize(), c.HeartbeatInterval(), seq)
	if err := c.Leave(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "leave:", err)
		return 93
	}
	return 0
}

// failAfterGoAhead waits until the test says every sleeper runs, then exits with envCode.
func failAfterGoAhead() int {
	conn, err := net.Dial("tcp", os.Getenv(envAddr))
	if err != nil {
		fmt.Fprintln(os.Stderr, "dial test:", err)
		return 98
	}
	if _, err := bufio.NewReader(conn).ReadString('\n'); err != nil {
		fmt.Fprintln(os.Stderr, "waiting for go-ahead:", err)
		return 97
	}
	code, _ := strconv.Atoi(os.Getenv(envCode))
	return code
}

// chatter starts a grandchild that sleeps, in this process's group as a shell's commands
// are, prints "ready PID GRANDCHILD_PID DIR" (DIR holds IBIS_POOL_SECRET_FILE), and then
// writes lines until it is stopped, so that ibis-run always has more output to write.
func chatter() int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "chatter:", err)
		return 70
	}
	gc := exec.Command(exe)
	gc.Env = append(os.Environ(), envMode+"=sleep")
	if err := gc.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "chatter: starting the grandchild:", err)
		return 71
	}
	fmt.Printf("ready %d %d %s\n", os.Getpid(), gc.Process.Pid, filepath.Dir(os.Getenv("IBIS_POOL_SECRET_FILE")))
	for {
		if _, err := fmt.Println("chatter"); err != nil {
			return 72
		}
		time.Sleep(time.Millisecond) // not needed for the test; spares the machine's CPUs
	}
}

// trustChild prints what a process got for the pool secret and TLS, and checks the files:
// they exist, the secret file and the key are readable by their owner only, and so is the
// directory they are in. With IBIS_RUN_TEST_JOIN set it then joins the pool with them
// (through the registry package, not ipl), as joinChild does.
func trustChild() int {
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(os.Stderr, format+"\n", args...)
		return code
	}
	_, inherited := os.LookupEnv("IBIS_POOL_SECRET")
	fmt.Printf("IBIS_POOL_SECRET set %v\n", inherited)
	dirs := map[string]bool{}
	for _, k := range []string{"IBIS_POOL_SECRET_FILE", "IBIS_TLS_CERT", "IBIS_TLS_KEY", "IBIS_TLS_CA"} {
		path := os.Getenv(k)
		if path == "" {
			fmt.Printf("%s unset\n", k)
			continue
		}
		st, err := os.Stat(path)
		if err != nil {
			return fail(80, "%s: %v", k, err)
		}
		mode := st.Mode().Perm()
		if (k == "IBIS_POOL_SECRET_FILE" || k == "IBIS_TLS_KEY") && mode != 0o600 {
			return fail(81, "%s %s has mode %v, want 0600", k, path, mode)
		}
		dirs[filepath.Dir(path)] = true
		fmt.Printf("%s %s\n", k, filepath.Base(path))
	}
	for dir := range dirs {
		st, err := os.Stat(dir)
		if err != nil {
			return fail(82, "%v", err)
		}
		if st.Mode().Perm()&0o077 != 0 {
			return fail(83, "directory %s has mode %v, want it private", dir, st.Mode().Perm())
		}
		fmt.Printf("dir %s\n", dir)
	}
	if len(dirs) > 1 {
		return fail(84, "the files are in %d directories", len(dirs))
	}
	if os.Getenv(envJoin) == "" {
		return 0
	}
	var opts []registry.Option
	secret, err := poolauth.Load(os.Getenv("IBIS_POOL_SECRET"), os.Getenv("IBIS_POOL_SECRET_FILE"))
	if err != nil {
		return fail(85, "%v", err)
	}
	if secret.IsSet() {
		opts = append(opts, registry.WithPoolSecret(secret.Bytes()))
	}
	if files := (tlsconf.Files{Cert: os.Getenv("IBIS_TLS_CERT"), Key: os.Getenv("IBIS_TLS_KEY"), CA: os.Getenv("IBIS_TLS_CA")}); files.IsSet() {
		cfg, err := files.Client()
		if err != nil {
			return fail(86, "%v", err)
		}
		opts = append(opts, registry.WithTLS(cfg))
	}
	if os.Getenv(envJoin) == "bare" {
		opts = nil // as a stranger without the secret and the certificate would
	}
	return joinPool(opts...)
}
