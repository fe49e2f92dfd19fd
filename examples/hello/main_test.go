package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ibisgo/ibis/internal/leakcheck"
	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/registry"
)

// envAsMain makes the test binary run hello's main, so the test's pool is real processes.
const envAsMain = "HELLO_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(envAsMain) != "" {
		main()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m, leakcheck.Options()...)
}

// TestServerEndsWhenClientsLeave: the server ends, successfully, once every client has left,
// whatever number of requests each asked for (here 1, 2 and 3 from the three processes, one
// of which the election makes the server); before, it waited for -n requests per client and
// so until its timeout when a client asked for fewer.
func TestServerEndsWhenClientsLeave(t *testing.T) {
	srv, err := registry.StartEmbedded("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	env := []string{envAsMain + "=1", "IBIS_REGISTRY=" + srv.Addr(), "IBIS_POOL=hello-test", "IBIS_POOL_SIZE=3"}
	var children []*selfexec.Child
	for n := 1; n <= 3; n++ {
		c, err := selfexec.Start(ctx, []string{"-n", fmt.Sprint(n), "-timeout", "3m"},
			selfexec.WithoutEnv("IBIS_"), selfexec.WithEnv(env...))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		children = append(children, c)
	}
	served := regexp.MustCompile(`server: served (\d) requests; every client has left`)
	servers, total := 0, 0
	for n, c := range children {
		if err := c.Wait(); err != nil {
			t.Fatalf("process with -n %d: %v\nstdout:\n%s\nstderr:\n%s", n+1, err, c.Stdout(), c.Stderr())
		}
		if m := served.FindStringSubmatch(c.Stdout()); m != nil {
			servers++
			total, _ = strconv.Atoi(m[1]) // one digit, by the pattern
			total += n + 1                // the server's own -n, which no client asked for
		}
	}
	if servers != 1 || total != 6 {
		var out strings.Builder
		for _, c := range children {
			out.WriteString(c.Stdout())
		}
		t.Fatalf("%d servers said they served everyone, and the requests and the server's -n add up to %d, want 6:\n%s", servers, total, out.String())
	}
}

// A bad command line is refused before anything starts, saying what is wrong, with exit
// status 2 (-n -1, arguments and -pool-size -1 were taken silently).
func TestBadCommandLine(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-n", "-1"}, "hello: -n -1: want a count of requests"},
		{[]string{"extra"}, `hello: unexpected arguments ["extra"]`},
		{[]string{"-pool-size", "-1"}, `invalid value "-1" for flag -pool-size: want a non-negative integer`},
		{[]string{"-timeout", "-1s"}, "hello: -timeout -1s: must not be negative"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		child, err := selfexec.Run(ctx, c.args, selfexec.WithoutEnv("IBIS_"), selfexec.WithEnv(envAsMain+"=1"))
		cancel()
		if child == nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if code := child.ExitCode(); code != 2 || !strings.Contains(child.Stderr(), c.want) {
			t.Errorf("%q: exit %d, stderr:\n%s\nwant exit 2 and %q", c.args, code, child.Stderr(), c.want)
		}
	}
}
