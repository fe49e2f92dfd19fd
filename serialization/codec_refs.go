package serialization

import "math/bits"

// refTable maps the objects an encoder has sent to their handles: an
// open-addressing table keyed by address and plan, as Java Ibis keeps its
// own identity table. It is faster than a Go map for this one job (a
// multiplicative hash of an aligned address, no per-message clearing: a
// generation number retires every entry at once) and holds addresses as
// integers, so objects of an old message are not kept alive by it. Within
// one message they are alive anyway (the value being written refers to
// them), and Go's heap does not move objects, so an address is an identity.
type refTable struct {
	slots []refSlot // a power of two in length
	shift uint      // 64 - log2(len(slots))
	gen   uint32    // entries of another generation are empty
	n     int       // entries of this generation
}

type refSlot struct {
	addr uintptr
	pl   *codecPlan
	h    uint32
	gen  uint32
}

// minRefSlots and maxRetainedRefSlots bound the table's size: the first
// allocation, and the largest table kept for the next message.
const (
	minRefSlots         = 64
	maxRetainedRefSlots = 1 << 16
)

// reset retires every entry.
func (t *refTable) reset() {
	t.n = 0
	if len(t.slots) > maxRetainedRefSlots {
		t.slots = nil
		return
	}
	if t.gen++; t.gen == 0 { // wrapped: old generations would come back
		clear(t.slots)
		t.gen = 1
	}
}

// handle returns the handle of the object at addr with plan pl and true if
// it was entered before, or enters it with handle next and returns next and
// false.
func (t *refTable) handle(addr uintptr, pl *codecPlan, next uint32) (uint32, bool) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	mask := uintptr(len(t.slots) - 1)
	i := uintptr(uint64(addr)*0x9E3779B97F4A7C15>>t.shift) & mask
	for {
		s := &t.slots[i]
		if s.gen != t.gen {
			*s = refSlot{addr, pl, next, t.gen}
			t.n++
			return next, false
		}
		if s.addr == addr && s.pl == pl {
			return s.h, true
		}
		i = (i + 1) & mask
	}
}

// grow doubles the table (or makes the first one) and re-enters the live
// entries.
func (t *refTable) grow() {
	old := t.slots
	n := max(2*len(old), minRefSlots)
	t.slots = make([]refSlot, n)
	t.shift = uint(64 - bits.TrailingZeros(uint(n)))
	if t.gen == 0 {
		t.gen = 1
	}
	gen := t.gen
	t.n = 0
	for _, s := range old {
		if s.gen == gen {
			t.handle(s.addr, s.pl, s.h)
		}
	}
}
