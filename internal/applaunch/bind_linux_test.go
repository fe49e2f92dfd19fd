package applaunch

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// TestStartOnBinds: a child started by startOn may run on that CPU only, from its start,
// and the launcher's own threads are not left bound.
func TestStartOnBinds(t *testing.T) {
	cpus := allowedCPUs()
	if len(cpus) == 0 {
		t.Skip("the CPU affinity is unknown here")
	}
	cpu := cpus[len(cpus)-1]
	var out bytes.Buffer
	cmd := exec.Command("cat", "/proc/self/status")
	cmd.Stdout = &out
	if err := startOn(cmd, cpu); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
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
