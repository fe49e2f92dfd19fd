package launch

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// collect writes input to a fresh lineWriter in chunks of the given size (the last may be
// shorter), flushes it and returns what reached the destination.
func collect(t *testing.T, input string, max, chunk int) string {
	t.Helper()
	var dst bytes.Buffer
	w := newLineWriter(NewLockedWriter(&dst), 7, max)
	for p := []byte(input); len(p) > 0; {
		n := min(chunk, len(p))
		got, err := w.Write(p[:n])
		if err != nil || got != n {
			t.Fatalf("Write(%q) = %d, %v; want %d, nil", p[:n], got, err, n)
		}
		p = p[n:]
	}
	if err := w.Flush(); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	return dst.String()
}

func TestLineWriter(t *testing.T) {
	tests := []struct {
		name  string
		input string
		max   int
		want  string
	}{
		{"empty", "", 16, ""},
		{"one line", "hello\n", 16, "[7] hello\n"},
		{"two lines", "a\nb\n", 16, "[7] a\n[7] b\n"},
		{"empty line", "\n", 16, "[7] \n"},
		{"final partial line", "a\nbc", 16, "[7] a\n[7] bc\n"},
		{"only partial", "xyz", 16, "[7] xyz\n"},
		{"carriage return kept", "a\r\n", 16, "[7] a\r\n"},
		{"exactly max", "abcd\n", 4, "[7] abcd\n"},
		{"exactly max twice", "abcd\nefgh\n", 4, "[7] abcd\n[7] efgh\n"},
		{"one over max", "abcde\n", 4, "[7] abcd\n[7] e\n"},
		{"twice max", "abcdefgh\n", 4, "[7] abcd\n[7] efgh\n"},
		{"twice max unterminated", "abcdefgh", 4, "[7] abcd\n[7] efgh\n"},
		{"long unterminated", "abcdefghi", 4, "[7] abcd\n[7] efgh\n[7] i\n"},
		{"max one", "ab\n\nc", 1, "[7] a\n[7] b\n[7] \n[7] c\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The output must not depend on how the stream was cut into writes.
			for chunk := 1; chunk <= max(1, len(tt.input)); chunk++ {
				if got := collect(t, tt.input, tt.max, chunk); got != tt.want {
					t.Fatalf("chunk %d: got %q, want %q", chunk, got, tt.want)
				}
			}
		})
	}
}

// TestLineWriterWholeLines checks that one Write of several lines reaches the destination as
// one call containing whole lines only, which is what keeps processes' lines apart.
func TestLineWriterWholeLines(t *testing.T) {
	rec := &recordingWriter{}
	w := newLineWriter(NewLockedWriter(rec), 0, 64)
	for _, s := range []string{"a\nb", "c\nd\n", "e"} {
		if _, err := w.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := []string{"[0] a\n", "[0] bc\n[0] d\n", "[0] e\n"}
	if strings.Join(rec.calls, "|") != strings.Join(want, "|") {
		t.Fatalf("writes %q, want %q", rec.calls, want)
	}
}

type recordingWriter struct{ calls []string }

func (r *recordingWriter) Write(p []byte) (int, error) {
	r.calls = append(r.calls, string(p))
	return len(p), nil
}

var errBroken = errors.New("broken destination")

type brokenWriter struct{ calls int }

func (b *brokenWriter) Write([]byte) (int, error) {
	b.calls++
	return 0, errBroken
}

func TestLineWriterDestinationError(t *testing.T) {
	dst := &brokenWriter{}
	w := newLineWriter(NewLockedWriter(dst), 0, 64)
	if _, err := w.Write([]byte("partial")); err != nil {
		t.Fatalf("buffering a partial line: %v", err)
	}
	if _, err := w.Write([]byte(" line\n")); !errors.Is(err, errBroken) {
		t.Fatalf("Write error %v, want %v", err, errBroken)
	}
	if _, err := w.Write([]byte("more\n")); !errors.Is(err, errBroken) {
		t.Fatalf("second Write error %v, want the first error again", err)
	}
	if err := w.Flush(); !errors.Is(err, errBroken) {
		t.Fatalf("Flush error %v, want the first error again", err)
	}
	if dst.calls != 1 {
		t.Fatalf("destination written %d times after failing, want 1", dst.calls)
	}
}

func TestNewLockedWriterKeepsLock(t *testing.T) {
	lw := NewLockedWriter(&bytes.Buffer{})
	if NewLockedWriter(lw) != lw {
		t.Fatal("wrapping a *LockedWriter again made a second lock")
	}
}

// FuzzLineWriter checks the line writer's invariants on arbitrary output cut at an arbitrary
// place: every output line carries the prefix, is at most max bytes, and together the lines
// hold exactly the input's bytes (newlines aside), whatever the chunking.
func FuzzLineWriter(f *testing.F) {
	f.Add([]byte("a\nb\nc"), uint8(3), uint8(2))
	f.Add([]byte("\n\n\n"), uint8(1), uint8(1))
	f.Add([]byte("abcdefgh\n"), uint8(4), uint8(5))
	f.Fuzz(func(t *testing.T, input []byte, maxByte, cut uint8) {
		max := int(maxByte%32) + 1
		whole := collect(t, string(input), max, len(input)+1)
		chunked := collect(t, string(input), max, int(cut%16)+1)
		if whole != chunked {
			t.Fatalf("chunking changed the output: %q vs %q", whole, chunked)
		}
		if whole != "" && !strings.HasSuffix(whole, "\n") {
			t.Fatalf("output %q does not end in a newline", whole)
		}
		var content strings.Builder
		for _, line := range strings.SplitAfter(whole, "\n") {
			if line == "" {
				continue
			}
			body, ok := strings.CutPrefix(line, "[7] ")
			if !ok {
				t.Fatalf("line %q lacks the prefix", line)
			}
			body = strings.TrimSuffix(body, "\n")
			if len(body) > max {
				t.Fatalf("line %q longer than %d", body, max)
			}
			content.WriteString(body)
		}
		if want := strings.ReplaceAll(string(input), "\n", ""); content.String() != want {
			t.Fatalf("lines hold %q, want %q", content.String(), want)
		}
	})
}
