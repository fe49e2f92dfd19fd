package cluster

import (
	"bytes"
	"io"
	"sync"
)

// prefixWriter writes a peer's output to a writer shared by every peer, one whole
// line at a time and each line prefixed with the peer's name, so that the lines
// of several peers neither interleave mid-line nor race on the writer.
type prefixWriter struct {
	mu     *sync.Mutex
	w      io.Writer
	prefix []byte
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		if err := p.emit(p.buf[:i+1]); err != nil {
			return len(b), err
		}
		p.buf = p.buf[i+1:]
	}
}

// flush writes a last line without newline, once the peer has exited.
func (p *prefixWriter) flush() {
	if len(p.buf) > 0 {
		_ = p.emit(append(p.buf, '\n'))
		p.buf = nil
	}
}

func (p *prefixWriter) emit(line []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, err := p.w.Write(append(append([]byte{}, p.prefix...), line...))
	return err
}
