package nio

import (
	"net"
	"sync"
	"sync/atomic"
)

// maxPooledPacket is the largest packet buffer kept for reuse; larger ones are left to
// the garbage collector, so one huge message does not pin its memory.
const maxPooledPacket = 4 << 20

// packet is one serialization packet copied once into a buffer of its own. Every
// connection a multicast queues it on holds a reference, and the buffer goes back to
// the pool when the last of them has written it.
type packet struct {
	b    []byte
	refs atomic.Int32
}

var packetPool = sync.Pool{New: func() any { return new(packet) }}

// newPacket copies bufs into a pooled packet with one reference, the caller's.
func newPacket(bufs net.Buffers) *packet {
	n := 0
	for _, b := range bufs {
		n += len(b)
	}
	p := packetPool.Get().(*packet)
	if cap(p.b) < n {
		p.b = make([]byte, n)
	}
	p.b = p.b[:n]
	o := 0
	for _, b := range bufs {
		o += copy(p.b[o:], b)
	}
	p.refs.Store(1)
	return p
}

func (p *packet) retain() { p.refs.Add(1) }

// Release drops one reference; the last one returns the buffer to the pool.
func (p *packet) Release() {
	switch r := p.refs.Add(-1); {
	case r == 0:
		if cap(p.b) <= maxPooledPacket {
			p.b = p.b[:0]
			packetPool.Put(p)
		}
	case r < 0:
		panic("nio: packet released more often than retained")
	}
}
