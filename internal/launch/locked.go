package launch

import (
	"io"
	"sync"
)

// LockedWriter serialises Write calls to an underlying writer. The processes of a group write
// to one destination from many goroutines; each Write carries whole lines, so serialising the
// calls is what keeps lines from different processes apart.
//
// Lock order: mu is a leaf as long as the underlying writer takes no lock of this package:
// a Group's mu may be held while it is taken (the group's logger may write here), never the
// other way.
type LockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// NewLockedWriter returns a LockedWriter for w. If w already is a *LockedWriter it is returned
// as it is, so that wrapping twice does not hide the shared lock.
func NewLockedWriter(w io.Writer) *LockedWriter {
	if lw, ok := w.(*LockedWriter); ok {
		return lw
	}
	return &LockedWriter{w: w}
}

// Write writes p to the underlying writer while holding the lock.
func (l *LockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
