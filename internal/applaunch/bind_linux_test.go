package applaunch

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibisgo/ibis/internal/selfexec"
)

// TestStartOnBinds: a child started by startOn, as Local starts it (through selfexec, on a
// thread of its own), may run on that CPU only, from its start, and the launcher's own
// threads are not left bound.
func TestStartOnBinds(t *testing.T) {
	cpus := allowedCPUs()
	if len(cpus) == 0 {
		t.Skip("the CPU affinity is unknown here")
	}
	cpu := cpus[len(cpus)-1]
	before := cpusAllowed(t)
	var out bytes.Buffer
	_, err := selfexec.Run(context.Background(), []string{"/proc/self/status"}, selfexec.WithProgram("cat"),
		selfexec.WithStdout(&out), selfexec.WithStart(func(cmd *exec.Cmd) error { return startOn(cmd, cpu) }))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("Cpus_allowed_list:\t%d\n", cpu)
	if !strings.Contains(out.String(), want) {
		t.Fatalf("child status has no %q:\n%s", want, out.String())
	}
	// Every thread of this process may still run where it could before: the thread that
	// forked the child, which other goroutines use again, was set back.
	tasks, err := filepath.Glob("/proc/self/task/*/status")
	if err != nil || len(tasks) == 0 {
		t.Fatalf("listing this process's threads: %v", err)
	}
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err != nil {
			continue // the thread ended
		}
		if want := "Cpus_allowed_list:\t" + before + "\n"; !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %q after startOn:\n%s", task, want, b)
		}
	}
}

// cpusAllowed is this thread's Cpus_allowed_list.
func cpusAllowed(t *testing.T) string {
	b, err := os.ReadFile("/proc/thread-self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:\t"); ok {
			return v
		}
	}
	t.Fatalf("no Cpus_allowed_list in:\n%s", b)
	return ""
}
