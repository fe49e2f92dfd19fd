package ipl_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// What srun and mpirun make of a launch without any setting, by hand: one process (rank
// 0) serves the pool's registry in-process, and the other, started first, keeps dialling
// it until it is up. Under srun and mpirun ipl.New does this by itself.
func ExampleWithServeRegistry() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0") // a free port for the example
	if err != nil {
		log.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()

	other := make(chan ipl.Ibis, 1)
	go func() {
		ib, err := ipl.New(ctx, ipl.WithImplementation("tcp"), ipl.WithRegistry(addr), ipl.WithPool("launch"),
			ipl.WithPoolSize(2), ipl.WithRegistryDialTimeout(-1)) // wait for rank 0's registry
		if err != nil {
			log.Fatal(err)
		}
		other <- ib
	}()
	rank0, err := ipl.New(ctx, ipl.WithImplementation("tcp"), ipl.WithServeRegistry(addr), ipl.WithRegistry(addr),
		ipl.WithPool("launch"), ipl.WithPoolSize(2))
	if err != nil {
		log.Fatal(err)
	}
	if err := rank0.Registry().WaitUntilPoolClosed(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("members:", len(rank0.Registry().Members()))
	ib := <-other
	_ = ib.Close()
	_ = rank0.Close() // after the other has left: rank 0's registry serves until then
	// Output: members: 2
}

// LaunchRank is the rank the launcher gave this process: IBIS_RANK (ibis-run, -np), the
// rank of mpirun or of an srun step, or -1 when started by hand.
func ExampleLaunchRank() {
	if r := ipl.LaunchRank(); r >= 0 {
		fmt.Printf("rank %d of %d\n", r, ipl.LaunchSize())
	} else {
		fmt.Println("not started by a launcher")
	}
}
