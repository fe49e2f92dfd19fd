package selfexec

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// envMode, when set, makes the test binary play a child in the named mode.
const envMode = "SELFEXEC_TEST_MODE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(envMode); mode != "" {
		os.Exit(childMain(mode))
	}
	goleak.VerifyTestMain(m)
}

func childMain(mode string) int {
	switch mode {
	case "echo": // arguments on stdout, some environment on stderr
		fmt.Println(strings.Join(os.Args[1:], " "))
		v, ok := os.LookupEnv("IBIS_SELFEXEC_TEST")
		fmt.Fprintf(os.Stderr, "ibis=%q,%v gorace=%q via=%q\n", v, ok, os.Getenv("GORACE"), os.Getenv("SELFEXEC_VIA"))
		return 0
	case "exit":
		fmt.Fprintln(os.Stderr, "failing")
		return 5
	case "term": // says ready, then ends with status 7 on SIGTERM
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM)
		fmt.Println("ready")
		<-c
		return 7
	case "cat":
		_, _ = io.Copy(os.Stdout, os.Stdin)
		return 0
	}
	return 99
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestRunCapturesOutputAndEnvironment(t *testing.T) {
	t.Setenv("IBIS_SELFEXEC_TEST", "leak")
	t.Setenv("GORACE", "halt_on_error=1")
	c, err := Run(testCtx(t), []string{NoTests, "a"}, WithEnv(envMode+"=echo"), WithoutEnv("IBIS_"))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got, want := c.Stdout(), NoTests+" a\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
	if got, want := c.Stderr(), `ibis="",false gorace="atexit_sleep_ms=0 halt_on_error=1" via=""`+"\n"; got != want {
		t.Errorf("stderr %q, want %q", got, want)
	}
	if o := c.Output(); c.ExitCode() != 0 || len(o) != len(c.Stdout()+c.Stderr()) || !strings.Contains(o, c.Stdout()) || !strings.Contains(o, c.Stderr()) {
		t.Errorf("exit %d, output %q", c.ExitCode(), c.Output())
	}
}

func TestCombinedOutput(t *testing.T) {
	c, err := Run(testCtx(t), []string{"w"}, WithEnv(envMode+"=echo"), WithCombinedOutput())
	if err != nil || !strings.HasPrefix(c.Output(), "w\n") || !strings.Contains(c.Output(), "gorace=") || c.Stdout()+c.Stderr() != "" {
		t.Fatalf("Run: %v, output %q, stdout %q, stderr %q", err, c.Output(), c.Stdout(), c.Stderr())
	}
	var none *Child
	if none.Output()+none.Stdout()+none.Stderr() != "" || none.ExitCode() != -1 {
		t.Fatal("a nil Child has output")
	}
}

func TestRunReportsFailure(t *testing.T) {
	c, err := Run(testCtx(t), nil, WithEnv(envMode+"=exit"))
	var ee *exec.ExitError
	if !errors.As(err, &ee) || c.ExitCode() != 5 || c.Stderr() != "failing\n" {
		t.Fatalf("Run: %v, exit %d, stderr %q", err, c.ExitCode(), c.Stderr())
	}
}

// TestContextEndSendsSIGTERM: the child hears SIGTERM, not SIGKILL, when the context ends.
func TestContextEndSendsSIGTERM(t *testing.T) {
	ctx, cancel := context.WithCancel(testCtx(t))
	c, err := Start(ctx, nil, WithEnv(envMode+"=term"), WithStdoutPipe())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if line, err := bufio.NewReader(c.StdoutPipe()).ReadString('\n'); line != "ready\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	cancel()
	if err := c.Wait(); c.ExitCode() != 7 {
		t.Fatalf("Wait: %v, exit %d; want 7 (SIGTERM handled)", err, c.ExitCode())
	}
}

// TestKill: Kill ends the child with SIGKILL and reaps it; Close after it does nothing more.
func TestKill(t *testing.T) {
	c, err := Start(testCtx(t), nil, WithEnv(envMode+"=term"), WithStdoutPipe())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(c.StdoutPipe()).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	_ = c.Kill()
	ws, ok := c.ProcessState().Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("ended with %v, not by SIGKILL", c.ProcessState())
	}
	c.Close()
	c.Close()
}

// TestStdoutPipeOutlivesTheChild: what the child wrote stays readable after Wait.
func TestStdoutPipeOutlivesTheChild(t *testing.T) {
	c, err := Start(testCtx(t), []string{"x", "y"}, WithEnv(envMode+"=echo"), WithStdoutPipe())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Wait(); err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(c.StdoutPipe())
	if err != nil || string(out) != "x y\n" || c.Stdout() != "" {
		t.Fatalf("pipe %q, %v; captured %q", out, err, c.Stdout())
	}
}

func TestStdinPipe(t *testing.T) {
	c, err := Start(testCtx(t), nil, WithEnv(envMode+"=cat"), WithStdinPipe())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c.StdinPipe(), "order\n"); err != nil {
		t.Fatal(err)
	}
	_ = c.StdinPipe().Close()
	if err := c.Wait(); err != nil || c.Stdout() != "order\n" {
		t.Fatalf("Wait: %v, stdout %q", err, c.Stdout())
	}
}

// TestLauncher: the launcher runs first and is given the child's command line.
func TestLauncher(t *testing.T) {
	c, err := Run(testCtx(t), []string{"z"}, WithEnv(envMode+"=echo"), WithLauncher("env", "SELFEXEC_VIA=env"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Stdout() != "z\n" || !strings.Contains(c.Stderr(), `via="env"`) {
		t.Fatalf("stdout %q, stderr %q", c.Stdout(), c.Stderr())
	}
}

func TestProgramAndWriters(t *testing.T) {
	echo, err := exec.LookPath("echo")
	if err != nil {
		t.Skip("no echo")
	}
	var out strings.Builder
	if _, err := Run(testCtx(t), []string{"hi"}, WithProgram(echo), WithStdout(&out)); err != nil || out.String() != "hi\n" {
		t.Fatalf("Run: %v, %q", err, out.String())
	}
	if _, err := Start(testCtx(t), nil, WithWaitDelay(-1)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("negative wait delay: %v", err)
	}
}
