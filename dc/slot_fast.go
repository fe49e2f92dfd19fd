//go:build !race

package dc

// slot is one place in the deque's ring: a plain pointer, published and taken through
// the atomic indices (see deque).
type slot struct{ t *task }

func (s *slot) load() *task   { return s.t }
func (s *slot) store(t *task) { s.t = t }
