package mpj_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"

	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/mpj"
)

// runSuite is what every process of a test pool runs: the steps in order, each across
// all ranks. Expected values are computed independently (closed formulas, or what each
// rank can work out alone), never by the operation under test.
func runSuite(ctx context.Context, w *mpj.World) error {
	steps := []struct {
		name string
		f    func(context.Context, *mpj.World) error
	}{
		{"ranks", checkRanks},
		{"exchange", checkExchange},
		{"ordering", checkOrdering},
		{"posted", checkPosted},
		{"errors", checkErrors},
		{"nonblocking", checkNonblocking},
		{"collectives", checkCollectives},
		{"reductions", checkReductions},
		{"communicators", checkCommunicators},
	}
	for _, s := range steps {
		if err := s.f(ctx, w); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return nil
}

func checkRanks(_ context.Context, w *mpj.World) error {
	want, _ := strconv.Atoi(os.Getenv("IBIS_RANK"))
	size, _ := strconv.Atoi(os.Getenv(ipl.EnvPoolSize))
	if w.Rank() != want || w.Size() != size {
		return fmt.Errorf("rank %d of %d, want %d of %d (the launch index)", w.Rank(), w.Size(), want, size)
	}
	return nil
}

// neighbours returns the ranks to the left and right in a ring.
func neighbours(c *mpj.Comm) (left, right int) {
	p := c.Size()
	return (c.Rank() - 1 + p) % p, (c.Rank() + 1) % p
}

// checkExchange: every rank sends to both neighbours and only then receives, with a
// small and a large (8 MiB) message: standard Send must not wait for the receive.
func checkExchange(ctx context.Context, w *mpj.World) error {
	left, right := neighbours(w.Comm)
	for _, n := range []int{16, 1 << 20} {
		out := make([]float64, n)
		for i := range out {
			out[i] = float64(w.Rank()*n + i)
		}
		if err := w.Send(ctx, out, right, 1); err != nil {
			return err
		}
		if err := w.Send(ctx, out, left, 2); err != nil {
			return err
		}
		for _, from := range []struct{ rank, tag int }{{left, 1}, {right, 2}} {
			in := make([]float64, n)
			st, err := w.Recv(ctx, in, from.rank, from.tag)
			if err != nil {
				return err
			}
			if st.Source != from.rank || st.Tag != from.tag || st.Count != n || st.Datatype != mpj.Float64 {
				return fmt.Errorf("status %+v, want source %d tag %d count %d float64", st, from.rank, from.tag, n)
			}
			for i, v := range in {
				if v != float64(from.rank*n+i) {
					return fmt.Errorf("n=%d from %d: element %d is %v", n, from.rank, i, v)
				}
			}
		}
	}
	return nil
}

// checkOrdering: every rank (rank 0 too) sends ten messages to rank 0 with tags cycling
// 0..2; rank 0 receives them with AnySource and AnyTag and must see each sender's in
// order. Then every rank sends tag 7 and tag 8; rank 0 takes tag 8 first, then 7.
func checkOrdering(ctx context.Context, w *mpj.World) error {
	const k = 10
	for i := range k {
		if err := w.Send(ctx, []int64{int64(w.Rank()), int64(i)}, 0, i%3); err != nil {
			return err
		}
	}
	if w.Rank() == 0 {
		if err := receiveInOrder(ctx, w, k); err != nil {
			return err
		}
	}
	if err := w.Barrier(ctx); err != nil {
		return err
	}
	for _, tag := range []int{7, 8} {
		if err := w.Send(ctx, []int32{int32(tag)}, 0, tag); err != nil {
			return err
		}
	}
	if w.Rank() != 0 {
		return nil
	}
	for src := range w.Size() {
		for _, tag := range []int{8, 7} {
			v := make([]int32, 1)
			if st, err := w.Recv(ctx, v, src, tag); err != nil || v[0] != int32(tag) || st.Tag != tag {
				return fmt.Errorf("from %d tag %d: got %v %+v, %v", src, tag, v, st, err)
			}
		}
	}
	return nil
}

// receiveInOrder receives k messages from every rank with wildcards and checks that
// each sender's come in the order sent.
func receiveInOrder(ctx context.Context, w *mpj.World, k int) error {
	next := make([]int, w.Size())
	for range k * w.Size() {
		v := make([]int64, 2)
		st, err := w.Recv(ctx, v, mpj.AnySource, mpj.AnyTag)
		if err != nil {
			return err
		}
		src, i := int(v[0]), int(v[1])
		if st.Source != src || st.Tag != i%3 || st.Count != 2 {
			return fmt.Errorf("status %+v for message %d of rank %d", st, i, src)
		}
		if i != next[src] {
			return fmt.Errorf("from rank %d: message %d came where %d was due (overtaken)", src, i, next[src])
		}
		next[src]++
	}
	return nil
}

// checkPosted: rank 0 posts receives with AnySource before anything is sent (a barrier
// orders it), so the messages are read straight into the posted buffers; each sender's
// messages must fill the requests in the order they were posted.
func checkPosted(ctx context.Context, w *mpj.World) error {
	const k = 3
	var reqs []*mpj.Request
	var bufs [][]int64
	if w.Rank() == 0 {
		for range k * w.Size() {
			b := make([]int64, 2)
			r, err := w.Irecv(b, mpj.AnySource, 9)
			if err != nil {
				return err
			}
			reqs, bufs = append(reqs, r), append(bufs, b)
		}
	}
	if err := w.Barrier(ctx); err != nil {
		return err
	}
	for i := range k {
		if err := w.Send(ctx, []int64{int64(w.Rank()), int64(i)}, 0, 9); err != nil {
			return err
		}
	}
	if w.Rank() != 0 {
		return nil
	}
	sts, err := mpj.WaitAll(ctx, reqs...)
	if err != nil {
		return err
	}
	next := make([]int64, w.Size())
	for j, b := range bufs {
		if sts[j].Source != int(b[0]) || b[1] != next[b[0]] {
			return fmt.Errorf("request %d got %v from %d, want message %d", j, b, sts[j].Source, next[b[0]])
		}
		next[b[0]]++
	}
	return nil
}

// checkErrors: receives into a too-small buffer or one of another element type fail
// clearly, both from the queue and into a posted receive, and the stream goes on.
func checkErrors(ctx context.Context, w *mpj.World) error {
	left, right := neighbours(w.Comm)
	posted, err := w.Irecv(make([]float64, 4), left, 23)
	if err != nil {
		return err
	}
	if err := w.Barrier(ctx); err != nil {
		return err
	}
	for _, s := range []struct {
		buf any
		tag int
	}{{make([]float64, 10), 20}, {make([]int32, 10), 21}, {[]float64{1, 2, 3}, 22}, {make([]float64, 10), 23}} {
		if err := w.Send(ctx, s.buf, right, s.tag); err != nil {
			return err
		}
	}
	if _, err := w.Recv(ctx, make([]float64, 5), left, 20); !errors.Is(err, mpj.ErrTruncated) {
		return fmt.Errorf("10 elements into 5: %v, want ErrTruncated", err)
	}
	if _, err := w.Recv(ctx, make([]float64, 10), left, 21); !errors.Is(err, mpj.ErrTypeMismatch) {
		return fmt.Errorf("[]int32 into []float64: %v, want ErrTypeMismatch", err)
	}
	got := make([]float64, 5)
	if st, err := w.Recv(ctx, got, left, 22); err != nil || st.Count != 3 || !slices.Equal(got[:3], []float64{1, 2, 3}) {
		return fmt.Errorf("after the errors: %v %+v, %v", got, st, err)
	}
	if _, err := posted.Wait(ctx); !errors.Is(err, mpj.ErrTruncated) {
		return fmt.Errorf("posted receive of 4 for 10 elements: %v, want ErrTruncated", err)
	}
	if err := w.Send(ctx, make([]float64, 1), w.Size(), 0); !errors.Is(err, ipl.ErrInvalidArgument) {
		return fmt.Errorf("send to rank %d: %v, want ErrInvalidArgument", w.Size(), err)
	}
	if err := w.Send(ctx, []string{"x"}, 0, 0); !errors.Is(err, ipl.ErrUnsupported) {
		return fmt.Errorf("send of []string: %v, want ErrUnsupported", err)
	}
	if err := w.Send(ctx, nil, 0, -3); !errors.Is(err, ipl.ErrInvalidArgument) {
		return fmt.Errorf("tag -3: %v, want ErrInvalidArgument", err)
	}
	return w.Barrier(ctx)
}

// checkNonblocking: Isend/Irecv with Test, WaitAny and WaitAll; Probe and Iprobe;
// Sendrecv around the ring; Ssend into a posted receive.
func checkNonblocking(ctx context.Context, w *mpj.World) error {
	left, right := neighbours(w.Comm)
	in := make([]uint16, 3)
	rr, err := w.Irecv(in, left, 30)
	if err != nil {
		return err
	}
	sr, err := w.Isend(ctx, []uint16{uint16(w.Rank()), 1, 2}, right, 30)
	if err != nil {
		return err
	}
	if _, done, err := sr.Test(); !done || err != nil {
		return fmt.Errorf("Isend not complete after return: %v %v", done, err)
	}
	i, st, err := mpj.WaitAny(ctx, rr)
	if err != nil || i != 0 || st.Source != left || in[0] != uint16(left) {
		return fmt.Errorf("WaitAny: %d %+v %v %v", i, st, in, err)
	}
	if _, done, err := rr.Test(); !done || err != nil {
		return fmt.Errorf("Test after Wait: %v %v", done, err)
	}

	if err := w.Send(ctx, make([]int16, 7), right, 31); err != nil {
		return err
	}
	st, err = w.Probe(ctx, left, 31)
	if err != nil || st.Count != 7 || st.Datatype != mpj.Int16 || st.Source != left || st.Tag != 31 {
		return fmt.Errorf("Probe: %+v %v", st, err)
	}
	if _, found, err := w.Iprobe(mpj.AnySource, 32); found || err != nil {
		return fmt.Errorf("Iprobe found a message never sent: %v %v", found, err)
	}
	if _, found, err := w.Iprobe(left, mpj.AnyTag); !found || err != nil {
		return fmt.Errorf("Iprobe missed the waiting message: %v %v", found, err)
	}
	if _, err := w.Recv(ctx, make([]int16, st.Count), left, 31); err != nil {
		return err
	}

	got := make([]int, 1)
	st, err = w.Sendrecv(ctx, []int{w.Rank()}, right, 33, got, left, 33)
	if err != nil || got[0] != left || st.Source != left {
		return fmt.Errorf("Sendrecv: %v %+v %v", got, st, err)
	}

	r, err := w.Irecv(make([]byte, 4), left, 34)
	if err != nil {
		return err
	}
	if err := w.Barrier(ctx); err != nil {
		return err
	}
	if err := w.Ssend(ctx, []byte("sync"), right, 34); err != nil {
		return err
	}
	_, err = mpj.WaitAll(ctx, r)
	return err
}

// checkCollectives: Barrier, Bcast, Reduce, Gather and Scatter from every root,
// Allgather and Allgatherv.
func checkCollectives(ctx context.Context, w *mpj.World) error {
	p, me := w.Size(), w.Rank()
	for range 3 {
		if err := w.Barrier(ctx); err != nil {
			return err
		}
	}
	for root := range p {
		buf := make([]int32, 5)
		if me == root {
			for i := range buf {
				buf[i] = int32(root*100 + i)
			}
		}
		if err := w.Bcast(ctx, buf, root); err != nil {
			return err
		}
		for i, v := range buf {
			if v != int32(root*100+i) {
				return fmt.Errorf("Bcast from %d: %v", root, buf)
			}
		}

		sum := make([]int64, 3)
		if err := w.Reduce(ctx, []int64{int64(me), int64(me * me), 1}, sum, mpj.Sum, root); err != nil {
			return err
		}
		n := int64(p)
		if want := []int64{n * (n - 1) / 2, (n - 1) * n * (2*n - 1) / 6, n}; me == root && !slices.Equal(sum, want) {
			return fmt.Errorf("Reduce to %d: %v, want %v", root, sum, want)
		}

		var all []float32
		if me == root {
			all = make([]float32, 2*p)
		}
		if err := w.Gather(ctx, []float32{float32(me), float32(me) + 0.5}, all, root); err != nil {
			return err
		}
		for r := range p {
			if me == root && (all[2*r] != float32(r) || all[2*r+1] != float32(r)+0.5) {
				return fmt.Errorf("Gather to %d: %v", root, all)
			}
		}

		var src []uint64
		if me == root {
			for r := range p {
				src = append(src, uint64(10*r), uint64(10*r+1), uint64(10*r+2))
			}
		}
		part := make([]uint64, 3)
		if err := w.Scatter(ctx, src, part, root); err != nil {
			return err
		}
		if !slices.Equal(part, []uint64{uint64(10 * me), uint64(10*me + 1), uint64(10*me + 2)}) {
			return fmt.Errorf("Scatter from %d: %v", root, part)
		}
	}

	ag := make([]int8, 2*p)
	if err := w.Allgather(ctx, []int8{int8(me), -int8(me)}, ag); err != nil {
		return err
	}
	for r := range p {
		if ag[2*r] != int8(r) || ag[2*r+1] != -int8(r) {
			return fmt.Errorf("Allgather: %v", ag)
		}
	}

	// The Barnes-Hut body exchange: rank r owns r+1 bodies.
	counts := make([]int, p)
	total := 0
	for r := range p {
		counts[r] = r + 1
		total += r + 1
	}
	mine := make([]float64, me+1)
	for j := range mine {
		mine[j] = float64(me) + 0.25*float64(j)
	}
	bodies := make([]float64, total)
	if err := w.Allgatherv(ctx, mine, bodies, counts, nil); err != nil {
		return err
	}
	k := 0
	for r := range p {
		for j := range r + 1 {
			if bodies[k] != float64(r)+0.25*float64(j) {
				return fmt.Errorf("Allgatherv: %v", bodies)
			}
			k++
		}
	}
	return nil
}

type numeric interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~int | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uint | ~float32 | ~float64
}

// allreduceSum checks Sum, Max and Min over one element type: rank r gives r+1.
func allreduceSum[T numeric](ctx context.Context, w *mpj.World) error {
	p := w.Size()
	v := []T{T(w.Rank() + 1), T(w.Rank() + 1), T(w.Rank() + 1)}
	out := make([]T, 3)
	if err := w.Allreduce(ctx, v[:1], out[:1], mpj.Sum); err != nil {
		return err
	}
	if err := w.Allreduce(ctx, v[1:2], out[1:2], mpj.Max); err != nil {
		return err
	}
	if err := w.Allreduce(ctx, v[2:], v[2:], mpj.Min); err != nil { // in place
		return err
	}
	out[2] = v[2]
	if want := []T{T(p * (p + 1) / 2), T(p), 1}; !slices.Equal(out, want) {
		return fmt.Errorf("%T: Sum, Max, Min = %v, want %v", v, out, want)
	}
	return nil
}

// checkReductions: every numeric type; the SOR convergence test (max of a float64);
// a floating-point sum whose bits must agree on every rank; logical and bitwise ops;
// an operator that does not fit its type.
func checkReductions(ctx context.Context, w *mpj.World) error {
	for _, f := range []func(context.Context, *mpj.World) error{
		allreduceSum[int8], allreduceSum[uint8], allreduceSum[int16], allreduceSum[uint16],
		allreduceSum[int32], allreduceSum[uint32], allreduceSum[int64], allreduceSum[uint64],
		allreduceSum[int], allreduceSum[uint], allreduceSum[float32], allreduceSum[float64],
	} {
		if err := f(ctx, w); err != nil {
			return err
		}
	}
	p, me := w.Size(), w.Rank()
	diff := []float64{0.001 * float64((me*7)%p)}
	if err := w.Allreduce(ctx, diff, diff, mpj.Max); err != nil {
		return err
	}
	if diff[0] != 0.001*float64(p-1) && !(p == 1 && diff[0] == 0) {
		return fmt.Errorf("max-Allreduce: %v, want %v", diff[0], 0.001*float64(p-1))
	}

	var bits [2]uint64
	for run := range 2 {
		s := []float64{0.1*float64(me+1) + 1e-17*float64(me)}
		if err := w.Allreduce(ctx, s, s, mpj.Sum); err != nil {
			return err
		}
		bits[run] = math.Float64bits(s[0])
	}
	if bits[0] != bits[1] {
		return fmt.Errorf("two Allreduce sums differ: %x %x", bits[0], bits[1])
	}
	everyone := make([]uint64, p)
	if err := w.Allgather(ctx, bits[:1], everyone); err != nil {
		return err
	}
	for r, b := range everyone {
		if b != bits[0] {
			return fmt.Errorf("rank %d's Allreduce sum has bits %x, this rank's %x", r, b, bits[0])
		}
	}

	flags := []bool{me == 0, me == 0, me == 0}
	out := make([]bool, 3)
	if err := w.Allreduce(ctx, flags[:1], out[:1], mpj.LOr); err != nil {
		return err
	}
	if err := w.Allreduce(ctx, flags[1:2], out[1:2], mpj.LAnd); err != nil {
		return err
	}
	if !out[0] || out[1] != (p == 1) {
		return fmt.Errorf("LOr, LAnd: %v", out[:2])
	}
	x := []uint32{1 << me}
	if err := w.Allreduce(ctx, x, x, mpj.BOr); err != nil || x[0] != 1<<p-1 {
		return fmt.Errorf("BOr of 1<<rank: %b, %v", x[0], err)
	}
	if err := w.Allreduce(ctx, []bool{true}, make([]bool, 1), mpj.Sum); !errors.Is(err, mpj.ErrTypeMismatch) {
		return fmt.Errorf("Sum of []bool: %v, want ErrTypeMismatch", err)
	}
	return nil
}

// checkCommunicators: Dup keeps traffic apart from its parent's even with equal tags;
// Split by parity with reversed keys; Split with Undefined; collectives back to back
// on several communicators.
func checkCommunicators(ctx context.Context, w *mpj.World) error {
	p, me := w.Size(), w.Rank()
	d, err := w.Dup(ctx)
	if err != nil {
		return err
	}
	if d.Rank() != me || d.Size() != p {
		return fmt.Errorf("Dup: rank %d of %d", d.Rank(), d.Size())
	}
	left, right := neighbours(w.Comm)
	if err := d.Send(ctx, []int32{1}, right, 5); err != nil {
		return err
	}
	if err := w.Send(ctx, []int32{2}, right, 5); err != nil {
		return err
	}
	v := make([]int32, 1)
	if _, err := w.Recv(ctx, v, left, 5); err != nil || v[0] != 2 {
		return fmt.Errorf("world received %v (%v), want 2: traffic of the Dup mixed in", v, err)
	}
	if _, err := d.Recv(ctx, v, mpj.AnySource, mpj.AnyTag); err != nil || v[0] != 1 {
		return fmt.Errorf("Dup received %v (%v), want 1", v, err)
	}

	half, err := w.Split(ctx, me%2, -me)
	if err != nil {
		return err
	}
	var group []int // the ranks of my parity, by descending rank (key -rank)
	for r := p - 1; r >= 0; r-- {
		if r%2 == me%2 {
			group = append(group, r)
		}
	}
	if half.Size() != len(group) || group[half.Rank()] != me {
		return fmt.Errorf("Split: rank %d of %d, group %v", half.Rank(), half.Size(), group)
	}
	groupSum := 0
	for _, r := range group {
		groupSum += r
	}
	for range 3 { // back to back on three communicators
		s := []int{me}
		if err := half.Allreduce(ctx, s, s, mpj.Sum); err != nil || s[0] != groupSum {
			return fmt.Errorf("Allreduce on the half: %v (%v), want %d", s, err, groupSum)
		}
		t := []int{1}
		if err := w.Allreduce(ctx, t, t, mpj.Sum); err != nil || t[0] != p {
			return fmt.Errorf("Allreduce on the world: %v (%v)", t, err)
		}
		b := []int{0}
		if d.Rank() == 0 {
			b[0] = 42
		}
		if err := d.Bcast(ctx, b, 0); err != nil || b[0] != 42 {
			return fmt.Errorf("Bcast on the Dup: %v (%v)", b, err)
		}
	}

	colour := 0
	if me == 0 {
		colour = mpj.Undefined
	}
	rest, err := w.Split(ctx, colour, me)
	if err != nil {
		return err
	}
	if me == 0 {
		if rest != nil {
			return fmt.Errorf("Split with Undefined gave a communicator")
		}
	} else {
		if rest.Size() != p-1 || rest.Rank() != me-1 {
			return fmt.Errorf("Split without rank 0: rank %d of %d", rest.Rank(), rest.Size())
		}
		if err := rest.Barrier(ctx); err != nil {
			return err
		}
	}
	return w.Barrier(ctx)
}
