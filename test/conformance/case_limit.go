package conformance

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ibisgo/ibis/ipl"
)

// childLimit is the message limit of the receiver in case receiver-limit.
const childLimit = 64 << 10

// A receiver takes smaller messages than its sender would: the child's Ibis takes at
// most 64 KiB, the parent's the default 1 GiB. The parent's write of 512 KiB fails with
// ErrTooLarge naming the child's port, the message goes on without it, and the
// connection lives: the child gets all three messages, one near its limit, in order.
var _ = register(&testCase{
	name:            "receiver-limit",
	children:        1,
	childMaxMessage: childLimit,
	parent: func(e *Env) {
		t := e.T
		ack, sp := sendToChild(e)
		for _, n := range []int{60 << 10, 512 << 10, 8} {
			m, err := sp.NewMessage(e.Ctx)
			if err != nil {
				t.Fatal(err)
			}
			werr := errors.Join(m.WriteInt64(int64(n)), m.WriteArray(make([]byte, n)))
			if _, err := m.Finish(); err != nil {
				t.Fatalf("finishing the message of %d bytes: %v", n, err)
			}
			switch {
			case n < childLimit && werr != nil:
				t.Errorf("writing %d bytes: %v", n, werr)
			case n > childLimit && (!errors.Is(werr, ipl.ErrTooLarge) || !strings.Contains(werr.Error(), "in@")):
				t.Errorf("writing %d bytes: %v; want ErrTooLarge naming the child's port", n, werr)
			}
		}
		waitAck(e, ack)
	},
	child: func(e *Env) error {
		rp, err := e.Ibis.CreateReceivePort(e.Ctx, OneToOne, "in")
		if err != nil {
			return err
		}
		defer rp.Close()
		for _, n := range []int{60 << 10, 512 << 10, 8} {
			if err := receiveOne(e, rp, func(m ipl.ReadMessage) error {
				got, err := m.ReadInt64()
				if err != nil || got != int64(n) {
					return fmt.Errorf("the message of %d bytes begins with %d, %v", n, got, err)
				}
				if n > childLimit {
					n = 0 // the refused write is not in the message
				}
				return m.ReadArray(make([]byte, n))
			}); err != nil {
				return err
			}
		}
		return sendOne(e, OneToOne, e.Parent, "ack", func(ipl.WriteMessage) error { return nil })
	},
})
