package launch_test

import (
	"context"
	"fmt"
	"os"

	"github.com/ibisgo/ibis/internal/launch"
)

// ExampleRun runs two copies of a program (here the test binary in its "hello" mode) and
// prints their output with the launch index in front of each line.
func ExampleRun() {
	env := func(i int) []string {
		return append(os.Environ(), "GORACE=atexit_sleep_ms=0", "LAUNCH_TEST_MODE=hello", fmt.Sprintf("LAUNCH_TEST_INDEX=%d", i))
	}
	statuses, err := launch.Run(context.Background(),
		launch.Spec{Program: os.Args[0], N: 2},
		launch.WithEnv(env), launch.WithStdout(os.Stdout), launch.WithStderr(os.Stderr))
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("exit codes:", statuses[0].Code(), statuses[1].Code())
	// Unordered output:
	// [0] hello from 0
	// [1] hello from 1
	// exit codes: 0 0
}
