package mpj_test

import (
	"fmt"

	"github.com/ibisgo/ibis/mpj"
)

// Pack puts buffers of several types into one []byte, which travels as one message;
// Unpack takes them apart in the same order, checking each type and size.
func ExamplePack() {
	type particle struct {
		Name string
		Mass float64
	}
	var msg []byte
	msg, _ = mpj.Pack(msg, []int32{3, 4})
	msg, _ = mpj.Pack(msg, [][]float64{{1, 2}, {3}})
	msg, _ = mpj.Pack(msg, []particle{{"p", 1.5}})
	// ... w.Send(ctx, msg, dest, tag) and, at dest, a Probe for the size and a Recv ...

	ids, grid, ps := make([]int32, 2), make([]float64, 3), make([]particle, 1)
	rest := msg
	for _, buf := range []any{ids, grid, ps} {
		var err error
		if rest, _, err = mpj.Unpack(rest, buf); err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Println(ids, grid, ps, len(rest))
	_, _, err := mpj.Unpack(msg, make([]float64, 2))
	fmt.Println(err)
	// Output:
	// [3 4] [1 2 3] [{p 1.5}] 0
	// ipl: type mismatch: mpj: unpacking int32 into a []float64
}
