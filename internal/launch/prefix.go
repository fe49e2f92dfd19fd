package launch

import (
	"bytes"
	"strconv"
)

// lineWriter cuts one process's output stream into lines and writes each to a shared
// destination with the process's prefix in front. Only whole lines are written, so lines of
// different processes never mix; a line longer than max is cut into pieces of max bytes, each
// ended with a newline. Flush writes a last unterminated line with a newline added.
//
// A lineWriter is used by one goroutine at a time (exec.Cmd's copier, then Wait's caller).
type lineWriter struct {
	dst    *LockedWriter
	prefix []byte
	max    int
	buf    []byte // the current unterminated line, at most max bytes
	out    []byte // scratch for the lines of one Write
	err    error  // first error from dst; sticky
}

// prefixFor returns the prefix written in front of every line of the process with the given
// launch index.
func prefixFor(index int) []byte {
	return []byte("[" + strconv.Itoa(index) + "] ")
}

func newLineWriter(dst *LockedWriter, index, max int) *lineWriter {
	return &lineWriter{dst: dst, prefix: prefixFor(index), max: max}
}

// Write buffers p and writes every line it completes. It reports the destination's error, if
// any; after one, nothing more is written.
func (w *lineWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n := len(p)
	w.out = w.out[:0]
	for len(p) > 0 {
		if len(w.buf) == w.max {
			// The pending line is full; the next byte decides whether it ends here
			// normally or is cut.
			if p[0] == '\n' {
				p = p[1:]
			}
			w.emit(nil)
			continue
		}
		room := w.max - len(w.buf)
		look := min(len(p), room+1)
		if i := bytes.IndexByte(p[:look], '\n'); i >= 0 {
			w.emit(p[:i])
			p = p[i+1:]
			continue
		}
		take := min(len(p), room)
		w.buf = append(w.buf, p[:take]...)
		p = p[take:]
	}
	if err := w.writeOut(); err != nil {
		return n, err
	}
	return n, nil
}

// Flush writes the pending unterminated line, if any, with a newline added.
func (w *lineWriter) Flush() error {
	if w.err != nil {
		return w.err
	}
	if len(w.buf) == 0 {
		return nil
	}
	w.out = w.out[:0]
	w.emit(nil)
	return w.writeOut()
}

// emit appends prefix, the pending line, tail and a newline to the output scratch and clears
// the pending line.
func (w *lineWriter) emit(tail []byte) {
	w.out = append(w.out, w.prefix...)
	w.out = append(w.out, w.buf...)
	w.out = append(w.out, tail...)
	w.out = append(w.out, '\n')
	w.buf = w.buf[:0]
}

func (w *lineWriter) writeOut() error {
	if len(w.out) == 0 {
		return nil
	}
	if _, err := w.dst.Write(w.out); err != nil {
		w.err = err
		return err
	}
	return nil
}
