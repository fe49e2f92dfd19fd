package mpj_test

import (
	"context"
	"fmt"
	"log"
	"time"

	_ "github.com/ibisgo/ibis/impl/tcp" // link in an implementation
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/mpj"
)

// A world of one process (started without a launcher, as an MPI singleton): a message
// to itself, and the two collectives of the SOR and Barnes-Hut applications. Started
// by `ibis-run -np 4` or under mpirun with -impl mp, the same code runs on four ranks.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := mpj.New(ctx, ipl.WithPool("mpj-example"), ipl.WithImplementation("tcp"))
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	fmt.Println("rank", w.Rank(), "of", w.Size())

	if err := w.Send(ctx, []float64{1.5, 2.5}, w.Rank(), 7); err != nil {
		log.Fatal(err)
	}
	got := make([]float64, 4)
	st, err := w.Recv(ctx, got, mpj.AnySource, mpj.AnyTag)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("received", got[:st.Count], "from", st.Source, "tag", st.Tag)

	change := []float64{0.003} // SOR: the largest change of any rank decides convergence
	if err := w.Allreduce(ctx, change, change, mpj.Max); err != nil {
		log.Fatal(err)
	}
	mine := []float64{1, 2, 3}      // Barnes-Hut: every rank gets every rank's bodies
	counts := make([]int, w.Size()) // how many each rank has
	if err := w.Allgather(ctx, []int{len(mine)}, counts); err != nil {
		log.Fatal(err)
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	all := make([]float64, total)
	if err := w.Allgatherv(ctx, mine, all, counts, nil); err != nil {
		log.Fatal(err)
	}
	fmt.Println("max change", change[0], "bodies", all)
	if err := w.Finalize(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// rank 0 of 1
	// received [1.5 2.5] from 0 tag 7
	// max change 0.003 bodies [1 2 3]
}
