// Package apptest runs the applications (apps/...) as real processes in their tests: the
// test binary re-executes itself as the application (TestMain calls the program's main
// when EnvAsMain is set), so -np pools are real pools of processes.
package apptest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/selfexec"
)

// EnvAsMain, set to 1, makes a test binary run the program's main (see TestMain in the
// applications' tests).
const EnvAsMain = "APP_TEST_AS_MAIN"

// Run runs this test binary as the program with args (and env added to an environment
// without IBIS_ variables) and returns its stdout, stderr and exit status.
func Run(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, err := selfexec.Run(ctx, args, selfexec.WithoutEnv("IBIS_", EnvAsMain),
		selfexec.WithEnv(append([]string{EnvAsMain + "=1"}, env...)...), selfexec.WithWaitDelay(15*time.Second))
	if c == nil {
		t.Fatalf("%v: %v", args, err)
	}
	code = c.ExitCode()
	if err != nil && code <= 0 {
		t.Fatalf("%v: %v\n%s", args, err, c.Stderr())
	}
	return c.Stdout(), c.Stderr(), code
}

// Output is the part of an application's -json output the tests check.
type Output struct {
	App        string         `json:"app"`
	Impl       string         `json:"impl"`
	Processes  int            `json:"processes"`
	Result     map[string]any `json:"result"`
	Statistics struct {
		Algorithm string `json:"algorithm"`
		Total     struct {
			Spawned  int64 `json:"spawned"`
			Executed int64 `json:"executed"`
			Steals   int64 `json:"steals"`
		} `json:"total"`
		Processes []struct {
			Site string `json:"site"`
		} `json:"processes"`
	} `json:"statistics"`
}

// RunJSON runs the program with -json added and decodes the root's output; it fails the
// test when the program fails or prints anything else than one JSON object on stdout.
func RunJSON(t *testing.T, env []string, args ...string) Output {
	t.Helper()
	stdout, stderr, code := Run(t, env, append(args, "-json")...)
	if code != 0 {
		t.Fatalf("%v: exit %d\n%s", args, code, stderr)
	}
	var out Output
	dec := json.NewDecoder(strings.NewReader(stdout))
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("%v: stdout is not JSON: %v\n%s", args, err, stdout)
	}
	if dec.More() {
		t.Fatalf("%v: more than one JSON object on stdout:\n%s", args, stdout)
	}
	return out
}

// Usage is a command line the program must refuse: exit status 2 and Want in its stderr.
type Usage struct {
	Args []string
	Want string
}

// Refuses runs the program with each command line and requires its refusal.
func Refuses(t *testing.T, cases []Usage) {
	t.Helper()
	for _, tc := range cases {
		_, stderr, code := Run(t, nil, tc.Args...)
		if code != 2 || !strings.Contains(stderr, tc.Want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.Args, code, stderr, tc.Want)
		}
	}
}
