package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// jsonCases returns the number of measured cases in a JSON report.
func jsonCases(rep map[string]any) int {
	values, _ := rep["values"].(map[string]any)
	cases, _ := values["cases"].([]any)
	return len(cases)
}

func TestConversionRun(t *testing.T) {
	png := filepath.Join(t.TempDir(), "conv.png")
	out, rep := mustRun(t, "conversion", "-sizes", "64,8K", "-reps", "2", "-min-batch", "0", "-plot", png)
	for _, want := range []string{
		"conversion, native byte order (MB/s)", "conversion, swapped byte order (MB/s)", "cost of the swapped byte order",
		"loop write", "stream read", "64 B int32[]", "8 KiB float64[]", "lower sextile of 2 timed batches",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := jsonCases(rep); n != 3*2*3*2*2 {
		t.Errorf("%d cases in the JSON, want 72", n)
	}
	for i := 1; i <= 4; i++ { // write and read, native and swapped: the first under the name asked for
		name := png
		if i > 1 {
			name = strings.TrimSuffix(png, ".png") + fmt.Sprintf("-%d.png", i)
		}
		if _, err := os.Stat(name); err != nil {
			t.Error(err)
		}
	}
}

func TestConversionUsage(t *testing.T) {
	for _, args := range [][]string{
		{"-sizes", "lots"},
		{"-types", "byte"},
		{"-types", "complex128"},
		{"-methods", "magic"},
		{"-orders", "middle"},
		{"-stat", "mean"},
		{"-reps", "0"},
		{"-sizes", "4", "-types", "int64"},
	} {
		code, _, errOut := runCmd(t, append([]string{"conversion", "-q"}, args...)...)
		// A usage error: a failure status and a message naming the subcommand
		// and what was wrong.
		if code == 0 || !strings.Contains(errOut, "ibis-bench conversion: usage") {
			t.Errorf("%v: exit %d (%s), want a failure and a usage message", args, code, errOut)
		}
	}
}
