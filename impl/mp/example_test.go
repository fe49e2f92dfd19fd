//go:build mpi

package mp_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/ibisgo/ibis/impl/mp"
	"github.com/ibisgo/ibis/ipl"
)

// A program over MPI: every rank opens the mp instance, whose pool is MPI_COMM_WORLD,
// and sends a slice to the next rank's port. Started with mpirun -np 4 it is a ring of
// four; started on its own, as this example is, it is an MPI singleton, a pool of one
// whose ring leads back to itself. Build with -tags mpi.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pt := ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationData, ipl.ReceiveExplicit,
		ipl.CommunicationReliable, ipl.CommunicationFIFO)
	ibis, err := ipl.New(ctx, ipl.WithImplementation(mp.Name), ipl.WithPortTypes(pt))
	if err != nil {
		log.Fatal(err)
	}
	defer ibis.Close() // collective, like MPI_Finalize
	reg := ibis.Registry()
	if err := reg.WaitUntilPoolClosed(ctx); err != nil { // every rank has joined
		log.Fatal(err)
	}
	members := reg.Members()
	me := ibis.Identifier()
	var next ipl.IbisIdentifier
	for i, m := range members {
		if m == me {
			next = members[(i+1)%len(members)]
		}
	}
	rp, err := ibis.CreateReceivePort(ctx, pt, "ring")
	if err != nil {
		log.Fatal(err)
	}
	sp, err := ibis.CreateSendPort(pt, "")
	if err != nil {
		log.Fatal(err)
	}
	if err := sp.Connect(ctx, next, "ring"); err != nil {
		log.Fatal(err)
	}
	w, err := sp.NewMessage(ctx)
	if err != nil {
		log.Fatal(err)
	}
	_ = w.WriteArray([]float64{1.5, 2.5, 3}) // a large slice would go from here in place
	if _, err := w.Finish(); err != nil {
		log.Fatal(err)
	}
	m, err := rp.Receive(ctx)
	if err != nil {
		log.Fatal(err)
	}
	got := make([]float64, 3)
	_ = m.ReadArray(got)
	_, _ = m.Finish()
	fmt.Printf("pool of %d; %s received %v\n", reg.PoolSize(), me.Address, got)
	// Output: pool of 1; mpi:0 received [1.5 2.5 3]
}
