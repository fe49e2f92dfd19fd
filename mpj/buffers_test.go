package mpj_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/mpj"
)

// Body is an object type for the object-buffer checks.
type Body struct {
	X, Y float64
	Name string
	Tags []string
}

func bodies(rank, n int) []Body {
	out := make([]Body, n)
	for i := range out {
		out[i] = Body{X: float64(rank) + 0.5, Y: float64(i), Name: fmt.Sprintf("b%d.%d", rank, i), Tags: []string{"t", fmt.Sprint(i)}}
	}
	return out
}

// grid2 is a ragged 2-D slice of six values that depend on the sender's rank.
func grid2(rank int) [][]float64 {
	r := float64(100 * rank)
	return [][]float64{{r + 1, r + 2, r + 3}, {r + 4}, {}, {r + 5, r + 6}}
}

func flat6(rank int) []float64 { return slices.Concat(grid2(rank)...) }

// checkBuffers: 2-D slices and objects point-to-point, around the ring (to itself when
// P = 1): received into other shapes, queued before their receive, probed, refused when the
// type or the room is wrong (the world working on afterwards), and Pack/Unpack.
func checkBuffers(ctx context.Context, w *mpj.World) error {
	left, right := neighbours(w.Comm)
	me := w.Rank()

	// A 2-D send, received flat and in another shape.
	if err := w.Send(ctx, grid2(me), right, 10); err != nil {
		return err
	}
	if err := w.Send(ctx, grid2(me), right, 11); err != nil {
		return err
	}
	flat := make([]float64, 7)
	st, err := w.Recv(ctx, flat, left, 10)
	if err != nil {
		return fmt.Errorf("2-D into 1-D: %w", err)
	}
	if st.Count != 6 || st.Datatype != mpj.Float64 || !slices.Equal(flat[:6], flat6(left)) {
		return fmt.Errorf("2-D into 1-D: %v %+v, want %v", flat, st, flat6(left))
	}
	other := [][]float64{make([]float64, 2), make([]float64, 5)}
	if _, err := w.Recv(ctx, other, left, 11); err != nil {
		return fmt.Errorf("2-D into another shape: %w", err)
	}
	if got := slices.Concat(other...)[:6]; !slices.Equal(got, flat6(left)) {
		return fmt.Errorf("2-D into another shape: %v, want %v", other, flat6(left))
	}

	// Objects sent before their receive is posted: the barrier's message from the sender
	// follows the data on the same connection, so the data is queued when it ends.
	if err := w.Send(ctx, bodies(me, 3), right, 12); err != nil {
		return err
	}
	if err := w.Barrier(ctx); err != nil {
		return err
	}
	st, err = w.Probe(ctx, left, 12)
	if err != nil {
		return err
	}
	if st.Count != 3 || st.Datatype != mpj.Object || st.Elem != "mpj_test.Body" {
		return fmt.Errorf("probe of objects: %+v", st)
	}
	got := make([]Body, st.Count)
	got[1].Tags = []string{"stale", "values", "go"}
	if _, err := w.Recv(ctx, got, left, 12); err != nil {
		return fmt.Errorf("objects: %w", err)
	}
	if !reflect.DeepEqual(got, bodies(left, 3)) {
		return fmt.Errorf("objects: %+v, want %+v", got, bodies(left, 3))
	}

	// Wrong type and too little room: errors, and the messages are consumed.
	for _, c := range []struct {
		send, recv any
		want       error
	}{
		{bodies(me, 2), make([]string, 2), ipl.ErrTypeMismatch},
		{grid2(me), make([]int32, 6), ipl.ErrTypeMismatch},
		{[]int32{1, 2}, [][]float64{{0, 0}}, ipl.ErrTypeMismatch},
		{bodies(me, 3), make([]Body, 2), mpj.ErrTruncated},
		{grid2(me), [][]float64{{0, 0}, {0}}, mpj.ErrTruncated},
	} {
		if err := w.Send(ctx, c.send, right, 13); err != nil {
			return err
		}
		if _, err := w.Recv(ctx, c.recv, left, 13); !errors.Is(err, c.want) {
			return fmt.Errorf("%T received into %T: %v, want %v", c.send, c.recv, err, c.want)
		}
	}

	// A value msgpack cannot encode fails the send, before anything is sent.
	if err := w.Send(ctx, []chan int{make(chan int)}, right, 16); !errors.Is(err, ipl.ErrUnsupported) {
		return fmt.Errorf("send of []chan int: %v, want ErrUnsupported", err)
	}

	// A receive of objects posted before the message; strings; then the world still works.
	r, err := w.Irecv(make([]string, 2), left, 14)
	if err != nil {
		return err
	}
	if err := w.Send(ctx, []string{"a", fmt.Sprint(me)}, right, 14); err != nil {
		return err
	}
	if st, err := r.Wait(ctx); err != nil || st.Count != 2 || st.Elem != "string" {
		return fmt.Errorf("posted receive of strings: %+v %v", st, err)
	}

	// Pack several buffers into one []byte message; Unpack them in order.
	var packed []byte
	for _, b := range []any{[]int32{int32(me), -7}, grid2(me), bodies(me, 2)} {
		if packed, err = mpj.Pack(packed, b); err != nil {
			return fmt.Errorf("pack %T: %w", b, err)
		}
	}
	if err := w.Send(ctx, packed, right, 15); err != nil {
		return err
	}
	st, err = w.Probe(ctx, left, 15)
	if err != nil {
		return err
	}
	in := make([]byte, st.Count)
	if _, err := w.Recv(ctx, in, left, 15); err != nil {
		return err
	}
	ints, grid, objs := make([]int32, 2), [][]float64{make([]float64, 6)}, make([]Body, 2)
	rest := in
	for _, b := range []any{ints, grid, objs} {
		if rest, _, err = mpj.Unpack(rest, b); err != nil {
			return fmt.Errorf("unpack %T: %w", b, err)
		}
	}
	if len(rest) != 0 || !slices.Equal(ints, []int32{int32(left), -7}) || !slices.Equal(grid[0], flat6(left)) ||
		!reflect.DeepEqual(objs, bodies(left, 2)) {
		return fmt.Errorf("unpacked %v %v %+v (%d bytes left)", ints, grid, objs, len(rest))
	}
	return w.Barrier(ctx)
}
