package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ibisgo/ibis/registry"
)

// The test binary is also the PROGRAM that ibis-run starts: with envMode set, TestMain runs
// the named child behaviour instead of the tests.
const (
	envMode   = "IBIS_RUN_TEST_MODE"
	envCode   = "IBIS_RUN_TEST_CODE"
	envFailer = "IBIS_RUN_TEST_FAILER"
	envAddr   = "IBIS_RUN_TEST_ADDR"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(envMode); mode != "" {
		os.Exit(childMain(mode))
	}
	// The race detector pauses one second before a race-enabled child exits; not needed here.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	goleak.VerifyTestMain(m)
}

// envKeys are the variables ibis-run sets, printed by the "env" child.
var envKeys = []string{"IBIS_REGISTRY", "IBIS_POOL", "IBIS_POOL_SIZE", "IBIS_IMPL", "IBIS_RANK", "IBIS_HEARTBEAT"}

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
	case "exit":
		code, _ := strconv.Atoi(os.Getenv(envCode))
		return code
	case "selfkill":
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // not reached
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
func joinChild() int {
	size, err := strconv.Atoi(os.Getenv("IBIS_POOL_SIZE"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "IBIS_POOL_SIZE:", err)
		return 90
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := registry.Join(ctx, os.Getenv("IBIS_REGISTRY"), os.Getenv("IBIS_POOL"), registry.WithPoolSize(size))
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
