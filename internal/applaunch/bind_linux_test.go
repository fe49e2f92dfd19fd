package applaunch

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
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
	if after := allowedCPUs(); len(after) != len(cpus) {
		t.Errorf("this thread may run on %v after startOn, before on %v", after, cpus)
	}
}
