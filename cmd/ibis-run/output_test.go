package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
)

// failingWriter fails every write with err, as a pipe without a reader or a full disk does.
type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) {
	return 0, &os.PathError{Op: "write", Path: "/dev/out", Err: w.err}
}

// TestLostOutput: when ibis-run cannot write the processes' output, even if they go on to
// succeed, the exit status says so: 141 (128+SIGPIPE) for a reader that has gone, 1 for
// another write error, whichever of stdout and stderr failed; a working stderr says why.
func TestLostOutput(t *testing.T) {
	tests := []struct {
		stream string
		err    error
		want   int
	}{
		{"standard output", syscall.EPIPE, exitOutputGone},
		{"standard output", syscall.ENOSPC, exitFailure},
		{"standard error", syscall.EPIPE, exitOutputGone},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %v", tt.stream, tt.err), func(t *testing.T) {
			t.Setenv(envMode, "lines") // each process writes to both
			var stdout, stderr io.Writer = new(bytes.Buffer), new(bytes.Buffer)
			if tt.stream == "standard output" {
				stdout = failingWriter{tt.err}
			} else {
				stderr = failingWriter{tt.err}
			}
			code := run(context.Background(), []string{"-np", "2", "-registry", "127.0.0.1:9", "--", os.Args[0]}, stdout, stderr)
			if code != tt.want {
				t.Errorf("exit %d, want %d; stderr:\n%v", code, tt.want, stderr)
			}
			if buf, ok := stderr.(*bytes.Buffer); ok {
				want := "cannot write to standard output: write /dev/out: " + tt.err.Error()
				if !strings.Contains(buf.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, buf)
				}
			}
		})
	}
}
