package launch

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"github.com/ibisgo/ibis/internal/selfexec"
)

// The test binary is its own child program: when envMode is set, TestMain runs the child
// behaviour it names instead of the tests.
const (
	envMode       = "LAUNCH_TEST_MODE"
	envIndex      = "LAUNCH_TEST_INDEX"
	envCode       = "LAUNCH_TEST_CODE"
	envAddr       = "LAUNCH_TEST_ADDR"
	envFailer     = "LAUNCH_TEST_FAILER"
	envIgnoreTerm = "LAUNCH_TEST_IGNORE_TERM"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(envMode); mode != "" {
		os.Exit(childMain(mode))
	}
	goleak.VerifyTestMain(m)
}

// childBaseEnv is the environment for child processes: this one, with the race detector's
// one-second pause at exit turned off so that race-enabled test runs stay short.
func childBaseEnv() []string {
	return append(os.Environ(), "GORACE=atexit_sleep_ms=0")
}

func childMain(mode string) int {
	index := os.Getenv(envIndex)
	switch mode {
	case "lines":
		for k := range 3 {
			fmt.Printf("out %s %d\n", index, k)
			fmt.Fprintf(os.Stderr, "err %s %d\n", index, k)
		}
		return 0
	case "hello":
		fmt.Printf("hello from %s\n", index)
		return 0
	case "partial":
		os.Stdout.WriteString("first\nsecond")
		os.Stderr.WriteString("e-partial")
		return 0
	case "exit":
		code, err := strconv.Atoi(os.Getenv(envCode))
		if err != nil {
			fmt.Fprintln(os.Stderr, "bad exit code:", err)
			return 99
		}
		return code
	case "selfkill":
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // not reached: SIGKILL cannot be caught
	case "coord":
		return coordChild(index)
	case "parent":
		// Starts a grandchild that registers as a sleeper, then waits for it: stopping the
		// group must reach the grandchild through the process group.
		if _, err := selfexec.Run(context.Background(), nil, selfexec.WithEnv(envMode+"=coord", envIndex+"=grandchild"),
			selfexec.WithStdout(os.Stdout), selfexec.WithStderr(os.Stderr)); err != nil {
			fmt.Fprintln(os.Stderr, "grandchild:", err)
			return 1
		}
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown child mode", mode)
	return 99
}

// coordChild registers with the test's coordinator. The process whose index is the failer
// waits for the coordinator's go-ahead and exits with envCode; every other one is a sleeper
// that blocks until it is killed.
func coordChild(index string) int {
	if os.Getenv(envIgnoreTerm) == "1" {
		signal.Ignore(syscall.SIGTERM)
	}
	conn, err := net.Dial("tcp", os.Getenv(envAddr))
	if err != nil {
		fmt.Fprintln(os.Stderr, "dial coordinator:", err)
		return 98
	}
	if index == os.Getenv(envFailer) {
		fmt.Fprintf(conn, "failer %d\n", os.Getpid())
		if _, err := bufio.NewReader(conn).ReadString('\n'); err != nil {
			fmt.Fprintln(os.Stderr, "waiting for go-ahead:", err)
			return 97
		}
		code, _ := strconv.Atoi(os.Getenv(envCode))
		return code
	}
	fmt.Fprintf(conn, "sleeper %d\n", os.Getpid())
	io.Copy(io.Discard, conn) // until killed (or the test closes the connection)
	return 0
}
