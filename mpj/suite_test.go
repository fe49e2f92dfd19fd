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
		{"buffers", checkBuffers},
		{"nonblocking", checkNonblocking},
		{"collectives", checkCollectives},
		{"collectives by tree", checkTrees},
		{"reductions", checkReductions},
		{"communicators", checkCommunicators},
		{"more collectives", checkMoreCollectives},
		{"large allreduce", checkLargeAllreduce},
	}
	for _, s := range steps {
		if err := s.f(ctx, w); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return nil
}

// envMPI marks the processes of an mpirun job (mpirun_test.go, build tag mpi).
const envMPI = "MPJ_TEST_MPI"

// launchRank returns the rank and size the launcher of an mpirun job gave this
// process; mpirun_test.go sets it under the build tag mpi.
var launchRank = func() (rank, size int, ok bool) { return 0, 0, false }

func checkRanks(_ context.Context, w *mpj.World) error {
	want, _ := strconv.Atoi(os.Getenv("IBIS_RANK"))
	size, _ := strconv.Atoi(os.Getenv(ipl.EnvPoolSize))
	if r, s, ok := launchRank(); ok { // under mpirun: Open MPI's rank, the MPI rank mp gives
		want, size = r, s
	} else if os.Getenv(envMPI) != "" {
		return fmt.Errorf("under mpirun without OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE")
	}
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
	if err := w.Send(ctx, "x", 0, 0); !errors.Is(err, ipl.ErrUnsupported) {
		return fmt.Errorf("send of a string: %v, want ErrUnsupported", err)
	}
	if err := w.Allreduce(ctx, [][]float64{{1}}, [][]float64{{1}}, mpj.Sum); !errors.Is(err, ipl.ErrUnsupported) {
		return fmt.Errorf("allreduce of a 2-D slice: %v, want ErrUnsupported", err)
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

// checkTrees runs checkCollectives with the flat algorithms for small messages off, so
// that the binomial Bcast and Scatter and the dissemination Barrier, which a small pool
// otherwise uses only for large messages or never, are checked on every pool too.
func checkTrees(ctx context.Context, w *mpj.World) error {
	mpj.SetFlat(false)
	defer mpj.SetFlat(true)
	return checkCollectives(ctx, w)
}

// checkBarrierWaits: no rank leaves a Barrier before every rank has entered it. In turn,
// one rank y Ssends to every other rank before it enters; each other rank posts the
// receive before it enters, so when y reaches the barrier every one of those receives
// has been matched, and a rank that finds its receive still pending after the barrier
// left it before y came. (A barrier that lets a rank go early is caught only when y is
// late to it, which its Ssends make likely but not certain.)
func checkBarrierWaits(ctx context.Context, w *mpj.World) error {
	const tag = 41
	p, me := w.Size(), w.Rank()
	for y := range p {
		var r *mpj.Request
		if me != y {
			var err error
			if r, err = w.Irecv(make([]byte, 1), y, tag); err != nil {
				return err
			}
		} else {
			for x := range p {
				if x != y {
					if err := w.Ssend(ctx, []byte{byte(y)}, x, tag); err != nil {
						return err
					}
				}
			}
		}
		if err := w.Barrier(ctx); err != nil {
			return err
		}
		if r == nil {
			continue
		}
		if _, done, err := r.Test(); err != nil || !done {
			return fmt.Errorf("left a Barrier before rank %d entered it (its message received: %v, %v)", y, done, err)
		}
	}
	return nil
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
	if err := checkBarrierWaits(ctx, w); err != nil {
		return err
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

// checkMoreCollectives: Gatherv and Scatterv from every root (counts of 0 included,
// displacements with gaps), Alltoall, Alltoallv, Scan and Exscan, Reduce_scatter and
// Reduce_scatter_block, MaxLoc and MinLoc, and operators made from Go functions, one
// of them not commutative, in every reduction. Expected values are closed formulas or
// loops over what every rank gave.
func checkMoreCollectives(ctx context.Context, w *mpj.World) error {
	p, me := w.Size(), w.Rank()
	gcounts := make([]int, p) // rank r gives r%3 elements: 0, 1, 2, 0, 1
	gdispls := make([]int, p) // in reverse rank order, with a gap of one after each
	off := 0
	for r := p - 1; r >= 0; r-- {
		gcounts[r] = r % 3
		gdispls[r] = off
		off += gcounts[r] + 1
	}
	val := func(r, j int) int32 { return int32(100*r + j) }
	for root := range p {
		mine := make([]int32, gcounts[me])
		for j := range mine {
			mine[j] = val(me, j)
		}
		var all []int32
		if me == root {
			all = make([]int32, off)
		}
		if err := w.Gatherv(ctx, mine, all, gcounts, gdispls, root); err != nil {
			return err
		}
		if me == root {
			for r := range p {
				for j := range gcounts[r] {
					if all[gdispls[r]+j] != val(r, j) {
						return fmt.Errorf("Gatherv to %d: %v (counts %v, displs %v)", root, all, gcounts, gdispls)
					}
				}
			}
		}
		var src []int32
		if me == root {
			src = make([]int32, off)
			for r := range p {
				for j := range gcounts[r] {
					src[gdispls[r]+j] = val(r, j) + int32(root)
				}
			}
		}
		part := make([]int32, gcounts[me])
		if err := w.Scatterv(ctx, src, part, gcounts, gdispls, root); err != nil {
			return err
		}
		for j, v := range part {
			if v != val(me, j)+int32(root) {
				return fmt.Errorf("Scatterv from %d: %v", root, part)
			}
		}
	}

	a2a := make([]int64, 2*p)
	for j := range p {
		a2a[2*j], a2a[2*j+1] = int64(1000*me+10*j), int64(1000*me+10*j+1)
	}
	got := make([]int64, 2*p)
	if err := w.Alltoall(ctx, a2a, got); err != nil {
		return err
	}
	for i := range p {
		if got[2*i] != int64(1000*i+10*me) || got[2*i+1] != int64(1000*i+10*me+1) {
			return fmt.Errorf("Alltoall: %v", got)
		}
	}
	// Alltoallv: rank i sends rank j (i+j)%3 elements of value 100i+j.
	scounts, rcounts := make([]int, p), make([]int, p)
	var sbuf []float32
	rtotal := 0
	for j := range p {
		scounts[j] = (me + j) % 3
		for range scounts[j] {
			sbuf = append(sbuf, float32(100*me+j))
		}
		rcounts[j] = (j + me) % 3
		rtotal += rcounts[j]
	}
	rbuf := make([]float32, rtotal)
	if err := w.Alltoallv(ctx, sbuf, scounts, nil, rbuf, rcounts, nil); err != nil {
		return err
	}
	k := 0
	for i := range p {
		for range rcounts[i] {
			if rbuf[k] != float32(100*i+me) {
				return fmt.Errorf("Alltoallv: %v", rbuf)
			}
			k++
		}
	}

	// Scan and Exscan: sums of rank+1 and of its square.
	in := []int64{int64(me + 1), int64((me + 1) * (me + 1))}
	sc := make([]int64, 2)
	if err := w.Scan(ctx, in, sc, mpj.Sum); err != nil {
		return err
	}
	n := int64(me + 1)
	if want := []int64{n * (n + 1) / 2, n * (n + 1) * (2*n + 1) / 6}; !slices.Equal(sc, want) {
		return fmt.Errorf("Scan: %v, want %v", sc, want)
	}
	ex := []int64{-7, -7}
	if err := w.Exscan(ctx, in, ex, mpj.Sum); err != nil {
		return err
	}
	n = int64(me)
	if want := []int64{n * (n + 1) / 2, n * (n + 1) * (2*n + 1) / 6}; me > 0 && !slices.Equal(ex, want) || me == 0 && ex[0] != -7 {
		return fmt.Errorf("Exscan: %v, want %v (rank 0: untouched)", ex, want)
	}

	// Reduce_scatter: rank r gets r+1 elements; element k of every sendbuf is 1000*rank+k.
	rcnt := make([]int, p)
	total := 0
	for r := range p {
		rcnt[r] = r + 1
		total += r + 1
	}
	rsIn := make([]int64, total)
	for k := range rsIn {
		rsIn[k] = int64(1000*me + k)
	}
	rsOut := make([]int64, me+1)
	if err := w.Reduce_scatter(ctx, rsIn, rsOut, rcnt, mpj.Sum); err != nil {
		return err
	}
	first := me * (me + 1) / 2 // my block's first element
	for j, v := range rsOut {
		if want := int64(1000*p*(p-1)/2 + p*(first+j)); v != want {
			return fmt.Errorf("Reduce_scatter: %v, element %d want %d", rsOut, j, want)
		}
	}
	blk := make([]uint16, 3*p)
	for k := range blk {
		blk[k] = uint16((k*5 + me*3) % 17)
	}
	bout := make([]uint16, 3)
	if err := w.Reduce_scatter_block(ctx, blk, bout, mpj.Max); err != nil {
		return err
	}
	for j, v := range bout {
		var want uint16
		for r := range p {
			want = max(want, uint16(((3*me+j)*5+r*3)%17))
		}
		if v != want {
			return fmt.Errorf("Reduce_scatter_block(Max): %v, element %d want %d", bout, j, want)
		}
	}

	// MaxLoc and MinLoc on (value, index) pairs: values (7*rank)%p, and a tie.
	pairs := []float64{float64((7 * me) % p), float64(me), 1, float64(me)}
	for _, op := range []mpj.Op{mpj.MaxLoc, mpj.MinLoc} {
		res := make([]float64, 4)
		if err := w.Allreduce(ctx, pairs, res, op); err != nil {
			return err
		}
		best, at := float64((7*0)%p), 0
		for r := 1; r < p; r++ {
			v := float64((7 * r) % p)
			if (op == mpj.MaxLoc && v > best) || (op == mpj.MinLoc && v < best) {
				best, at = v, r
			}
		}
		if want := []float64{best, float64(at), 1, 0}; !slices.Equal(res, want) {
			return fmt.Errorf("Allreduce(%s): %v, want %v", op, res, want)
		}
	}
	if err := w.Allreduce(ctx, []int32{1, 2, 3}, make([]int32, 3), mpj.MaxLoc); !errors.Is(err, mpj.ErrCount) {
		return fmt.Errorf("MaxLoc of an odd length: %v, want ErrCount", err)
	}
	// Buffers that disagree, refused before anything is sent: another element type is
	// a type mismatch (it was reported as a count mismatch), another length a count.
	if err := w.Allreduce(ctx, []float64{1}, make([]int64, 1), mpj.Sum); !errors.Is(err, mpj.ErrTypeMismatch) || errors.Is(err, mpj.ErrCount) {
		return fmt.Errorf("Allreduce of []float64 into []int64: %v, want ErrTypeMismatch only", err)
	}
	if err := w.Allreduce(ctx, []float64{1, 2}, make([]float64, 1), mpj.Sum); !errors.Is(err, mpj.ErrCount) {
		return fmt.Errorf("Allreduce of 2 elements into 1: %v, want ErrCount", err)
	}
	return checkUserOps(ctx, w)
}

// checkUserOps: operators from Go functions. "first" (a o b = a) and "last"
// (a o b = b) are associative and not commutative: any reduction that strays from
// rank order gives another rank's value. A commutative user sum must give the bits of
// Sum, since both are applied in the same order.
func checkUserOps(ctx context.Context, w *mpj.World) error {
	p, me := w.Size(), w.Rank()
	firstOp, err := mpj.NewOp(func(a, _ int32) int32 { return a }, false)
	if err != nil {
		return err
	}
	defer firstOp.Free()
	lastOp, err := mpj.NewOp(func(_, b int32) int32 { return b }, false)
	if err != nil {
		return err
	}
	defer lastOp.Free()
	sumOp, err := mpj.NewOp(func(a, b float64) float64 { return a + b }, true)
	if err != nil {
		return err
	}
	defer sumOp.Free()

	v := []int32{int32(10 + me)}
	fl := make([]int32, 2)
	for root := range p {
		fl[0], fl[1] = -1, -1
		if err := w.Reduce(ctx, v, fl[:1], firstOp, root); err != nil {
			return err
		}
		if err := w.Reduce(ctx, v, fl[1:], lastOp, root); err != nil {
			return err
		}
		if me == root && (fl[0] != 10 || fl[1] != int32(10+p-1)) {
			return fmt.Errorf("Reduce to %d of first, last: %v, want [10 %d]", root, fl, 10+p-1)
		}
	}
	if err := w.Allreduce(ctx, v, fl[:1], firstOp); err != nil {
		return err
	}
	if err := w.Allreduce(ctx, v, fl[1:], lastOp); err != nil {
		return err
	}
	if fl[0] != 10 || fl[1] != int32(10+p-1) {
		return fmt.Errorf("Allreduce of first, last: %v, want [10 %d]", fl, 10+p-1)
	}
	if err := w.Scan(ctx, v, fl[:1], firstOp); err != nil {
		return err
	}
	if err := w.Scan(ctx, v, fl[1:], lastOp); err != nil {
		return err
	}
	if fl[0] != 10 || fl[1] != int32(10+me) {
		return fmt.Errorf("Scan of first, last: %v, want [10 %d]", fl, 10+me)
	}
	fl[0], fl[1] = -1, -1
	if err := w.Exscan(ctx, v, fl[:1], firstOp); err != nil {
		return err
	}
	if err := w.Exscan(ctx, v, fl[1:], lastOp); err != nil {
		return err
	}
	if me > 0 && (fl[0] != 10 || fl[1] != int32(10+me-1)) {
		return fmt.Errorf("Exscan of first, last: %v, want [10 %d]", fl, 10+me-1)
	}
	rs := make([]int32, 2*p)
	for k := range rs {
		rs[k] = int32(100*me + k)
	}
	out := make([]int32, 2)
	if err := w.Reduce_scatter_block(ctx, rs, out, lastOp); err != nil {
		return err
	}
	if out[0] != int32(100*(p-1)+2*me) || out[1] != int32(100*(p-1)+2*me+1) {
		return fmt.Errorf("Reduce_scatter_block of last: %v", out)
	}

	x := []float64{0.1*float64(me+1) + 1e-17*float64(me), 1.0 / float64(me+3)}
	a, b := make([]float64, 2), make([]float64, 2)
	if err := w.Allreduce(ctx, x, a, mpj.Sum); err != nil {
		return err
	}
	if err := w.Allreduce(ctx, x, b, sumOp); err != nil {
		return err
	}
	if math.Float64bits(a[0]) != math.Float64bits(b[0]) || math.Float64bits(a[1]) != math.Float64bits(b[1]) {
		return fmt.Errorf("Allreduce with a user sum %v, with Sum %v", b, a)
	}
	if err := w.Allreduce(ctx, []int64{1}, make([]int64, 1), sumOp); !errors.Is(err, mpj.ErrTypeMismatch) {
		return fmt.Errorf("a float64 operator on []int64: %v, want ErrTypeMismatch", err)
	}
	return nil
}

// checkLargeAllreduce: vectors above 64 KiB take Rabenseifner's algorithm. A float64
// sum whose bits depend on the bracketing must equal, bit for bit, the same sums made
// by small Allreduces (recursive doubling) of 8 KiB slices, and be the same on every
// rank; a non-commutative operator must keep rank order; MaxLoc must not split its
// pairs (an odd number of pairs).
func checkLargeAllreduce(ctx context.Context, w *mpj.World) error {
	p, me := w.Size(), w.Rank()
	const n = 20011 // 156 KiB of float64, split unevenly
	x := make([]float64, n)
	for i := range x {
		x[i] = 1/float64(i%97+me+1) + 1e-16*float64((i*me)%13)
	}
	big := make([]float64, n)
	if err := w.Allreduce(ctx, x, big, mpj.Sum); err != nil {
		return err
	}
	small := make([]float64, n)
	for lo := 0; lo < n; lo += 1000 {
		hi := min(lo+1000, n)
		if err := w.Allreduce(ctx, x[lo:hi], small[lo:hi], mpj.Sum); err != nil {
			return err
		}
	}
	for i := range big {
		if math.Float64bits(big[i]) != math.Float64bits(small[i]) {
			return fmt.Errorf("element %d: large Allreduce %v, small ones %v", i, big[i], small[i])
		}
	}
	h := []uint64{0}
	for _, v := range big {
		h[0] = h[0]*1099511628211 ^ math.Float64bits(v)
	}
	hs := make([]uint64, p)
	if err := w.Allgather(ctx, h, hs); err != nil {
		return err
	}
	for r, v := range hs {
		if v != h[0] {
			return fmt.Errorf("rank %d's large Allreduce hashes to %x, this rank's to %x", r, v, h[0])
		}
	}

	lastOp, err := mpj.NewOp(func(_, b int32) int32 { return b }, false)
	if err != nil {
		return err
	}
	defer lastOp.Free()
	iv := make([]int32, 30000)
	for i := range iv {
		iv[i] = int32(me*100000 + i)
	}
	if err := w.Allreduce(ctx, iv, iv, lastOp); err != nil {
		return err
	}
	for i, v := range iv {
		if v != int32((p-1)*100000+i) {
			return fmt.Errorf("large Allreduce of last: element %d is %d", i, v)
		}
	}

	const pairs = 9001 // 144 KiB of int64 pairs
	loc := make([]int64, 2*pairs)
	for i := range pairs {
		loc[2*i], loc[2*i+1] = int64((i+3*me)%p), int64(me)
	}
	if err := w.Allreduce(ctx, loc, loc, mpj.MaxLoc); err != nil {
		return err
	}
	for i := range pairs {
		best, at := int64(-1), int64(0)
		for r := range p {
			if v := int64((i + 3*r) % p); v > best {
				best, at = v, int64(r)
			}
		}
		if loc[2*i] != best || loc[2*i+1] != at {
			return fmt.Errorf("large MaxLoc: pair %d is (%d, %d), want (%d, %d)", i, loc[2*i], loc[2*i+1], best, at)
		}
	}
	return nil
}
