package main

import (
	"strings"
	"testing"
)

func TestSerializationRun(t *testing.T) {
	out, rep := mustRun(t, "serialization", "-size", "8K", "-nodes", "15", "-reps", "2", "-min-batch", "0")
	for _, want := range []string{
		"serialization, native byte order (MB/s)", "serialization, swapped byte order (MB/s)",
		"data write", "object read", "8 KiB byte[]", "8 KiB float64[]", "15-node tree user", "15-node tree total",
		"8256 / 8304", // an 8 KiB array: two headers (data); plus tag and length (object)
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := jsonCases(rep); n != 5*2*2*2 {
		t.Errorf("%d cases in the JSON, want 40", n)
	}

	// Only the arrays, only one serialization and order.
	out, _ = mustRun(t, "serialization", "-size", "64", "-types", "int16", "-nodes", "0",
		"-kinds", "object", "-orders", "swapped", "-reps", "1", "-min-batch", "0")
	if strings.Contains(out, "-node tree") || strings.Contains(out, "native byte order") || !strings.Contains(out, "64 B int16[]") {
		t.Fatalf("output:\n%s", out)
	}
}

func TestSerializationUsage(t *testing.T) {
	for _, args := range [][]string{
		{"-size", "0"},
		{"-size", "big"},
		{"-size", "4", "-types", "int64"},
		{"-types", "string"},
		{"-kinds", "byte"},
		{"-nodes", "-1"},
		{"-nodes", "100000000"},
		{"-min-batch", "-1s"},
	} {
		code, _, errOut := runCmd(t, append([]string{"serialization", "-q"}, args...)...)
		if code == 0 || !strings.Contains(errOut, "ibis-bench serialization: usage") {
			t.Errorf("%v: exit %d (%s), want a failure and a usage message", args, code, errOut)
		}
	}
}
