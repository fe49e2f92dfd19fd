package registry

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
)

func frameBytes(body []byte) []byte {
	f := make([]byte, frameHeaderSize+len(body))
	copy(f[frameHeaderSize:], body)
	putFrameHeader(f)
	return f
}

func TestReadFrame(t *testing.T) {
	t.Run("round trip, several frames, buffer reuse", func(t *testing.T) {
		var stream bytes.Buffer
		bodies := [][]byte{[]byte("a"), bytes.Repeat([]byte("b"), 3*frameChunk+5), []byte("cc")}
		for _, b := range bodies {
			stream.Write(frameBytes(b))
		}
		var buf []byte
		for i, want := range bodies {
			got, err := readFrame(&stream, buf, 1<<20)
			if err != nil {
				t.Fatalf("frame %d: %v", i, err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("frame %d: got %d bytes, want %d", i, len(got), len(want))
			}
			buf = got
		}
		if _, err := readFrame(&stream, buf, 1<<20); err != io.EOF {
			t.Fatalf("at end of stream: got %v, want io.EOF", err)
		}
	})

	cases := []struct {
		name  string
		input []byte
		max   int
		want  string
	}{
		{"empty frame", []byte{0, 0, 0, 0}, 100, "empty frame"},
		{"too large", []byte{0, 0, 0, 101}, 100, "exceeds the maximum"},
		{"absurd length", []byte{0xff, 0xff, 0xff, 0xff}, 1 << 20, "exceeds the maximum"},
		{"truncated header", []byte{0, 0}, 100, "inside a frame header"},
		{"truncated body", []byte{0, 0, 0, 10, 1, 2, 3}, 100, "truncated frame: got 3 of 10"},
		{"http request", []byte("GET / HTTP/1.1\r\n\r\n"), 1 << 20, "exceeds the maximum"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readFrame(bytes.NewReader(tc.input), nil, tc.max)
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("got %v, want an error wrapping ErrProtocol", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
		})
	}

	t.Run("read error passes through", func(t *testing.T) {
		boom := errors.New("boom")
		_, err := readFrame(io.MultiReader(bytes.NewReader([]byte{0, 0, 0, 9, 1}), errReader{boom}), nil, 100)
		if !errors.Is(err, boom) || errors.Is(err, ErrProtocol) {
			t.Fatalf("got %v, want the reader's error, not a protocol error", err)
		}
	})
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// FuzzReadFrame checks that the frame decoder never panics, never returns
// more than the maximum, and either returns a frame or a clear error.
func FuzzReadFrame(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 'x'})
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 1})
	f.Add([]byte{0, 0, 1, 0, 1, 2})
	f.Add(append(frameBytes([]byte("hello")), frameBytes([]byte("world"))...))
	const max = 4096
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		var buf []byte
		for {
			body, err := readFrame(r, buf, max)
			if err != nil {
				if err != io.EOF && !errors.Is(err, ErrProtocol) {
					t.Fatalf("unexpected error kind: %v", err)
				}
				return
			}
			if len(body) == 0 || len(body) > max {
				t.Fatalf("frame of %d bytes escaped the bounds", len(body))
			}
			if cap(body) > max+frameChunk {
				t.Fatalf("buffer grew to %d bytes for a maximum of %d", cap(body), max)
			}
			buf = body
		}
	})
}

func TestPutFrameHeader(t *testing.T) {
	f := frameBytes([]byte("abc"))
	if n := binary.BigEndian.Uint32(f); n != 3 {
		t.Fatalf("length prefix %d, want 3", n)
	}
}
