package tcp

import (
	"fmt"
	"testing"

	"github.com/ibisgo/ibis/impl/internal/impltest"
)

// A many-to-one port hands out whole messages first: a sender stopped in the middle of
// a message holds up nobody else's complete ones.
func TestWholeMessagesFirst(t *testing.T) { impltest.WholeMessagesFirst(t, Name, nil) }

// Eight senders stopped in the middle of messages are cut together, after a message
// timeout, while a healthy one is served.
func TestStalledSendersCutTogether(t *testing.T) { impltest.StalledSendersCutTogether(t, Name, nil) }

// A measurement (docs/reliability-load.md), run only with $IBIS_HELD_CONNS set.
func TestHeldMemory(t *testing.T) { impltest.HeldMemory(t, Name, nil) }

// What a message costs on the many-to-one path, by size.
func BenchmarkManyToOne(b *testing.B) {
	for _, size := range []int{0, 64 << 10} {
		b.Run(fmt.Sprint(size), func(b *testing.B) { impltest.ManyToOneStream(b, Name, nil, size) })
	}
}
