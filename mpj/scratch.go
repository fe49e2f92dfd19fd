package mpj

import (
	"context"
	"reflect"
	"sync"
)

// Scratch buffers of the large collectives. A collective of 1 MiB that allocates its
// temporaries afresh pays for zeroing them and, as the garbage adds up, for the
// collector: a tenth of a 1 MiB Allreduce's CPU time at p = 4. Buffers of at least
// scratchMin bytes are therefore kept between calls, one pool per element type.

// scratchMin is the smallest temporary, in bytes, worth keeping between calls.
const scratchMin = 64 << 10

// scratchPools holds spare buffers by element type, as *spare.
var scratchPools [Float64 + 1]sync.Pool

// spare is a pooled buffer: a slice at its full capacity.
type spare struct{ buf any }

// getScratch returns a buffer of n elements of type dt whose contents are undefined.
func getScratch(dt Datatype, n int) any {
	if n*dt.size() < scratchMin || int(dt) >= len(scratchPools) {
		return makeBuf(dt, n)
	}
	if s, ok := scratchPools[dt].Get().(*spare); ok && reflect.ValueOf(s.buf).Cap() >= n {
		return sliceBuf(s.buf, 0, n)
	}
	return makeBuf(dt, n)
}

// putScratch gives a buffer from getScratch back; the caller no longer touches it,
// and no receive is posted into it.
func putScratch(dt Datatype, buf any) {
	if buf == nil || int(dt) >= len(scratchPools) {
		return
	}
	v := reflect.ValueOf(buf)
	if v.Cap()*dt.size() < scratchMin {
		return
	}
	scratchPools[dt].Put(&spare{buf: v.Slice(0, v.Cap()).Interface()})
}

// withdraw takes back posted receives that will not be waited for (a collective that
// failed half-way): each is cancelled, or, if a message matched it already, waited
// for, so that nothing writes into the collective's buffers after it returned.
func (c *Comm) withdraw(reqs []*Request) {
	for _, r := range reqs {
		if r != nil && !c.cancel(r) {
			_, _ = r.Wait(context.Background())
		}
	}
}
