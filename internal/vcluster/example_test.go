package vcluster_test

import (
	"context"
	"fmt"
	"log"

	"github.com/ibisgo/ibis/internal/vcluster"
)

// Example builds four hosts with SLURM, runs a task on each with srun and one rank on each
// with mpirun, and removes it all. It needs root, SLURM, munge and Open MPI.
func Example() {
	if err := vcluster.Unavailable(vcluster.NeedSlurm, vcluster.NeedMPIRun); err != nil {
		log.Print(err) // a test would t.Skip(err)
		return
	}
	ctx := context.Background()
	c, err := vcluster.Up(ctx, vcluster.WithHosts(4), vcluster.WithSlurm())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	out, err := c.Srun(ctx, "h1", "-N", "4", "-n", "4", "hostname").Output()
	fmt.Printf("srun: %s (%v)\n", out, err)
	out, err = c.MPIRun(ctx, 4, "hostname").Output()
	fmt.Printf("mpirun: %s (%v)\n", out, err)
}
