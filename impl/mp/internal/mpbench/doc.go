// Command mpbench compares a ping-pong through impl/mp with the same ping-pong written
// as direct MPI calls from Go (blocking MPI_Send and MPI_Recv through cgo, holding
// the mp engine's progress lock, on a communicator of their own) and with impl/tcp, all between the
// same two processes of one mpirun job, in interleaved rounds. It reports the round
// trip of empty messages and the bandwidth of 1 MiB messages, with the ratios to
// direct MPI. Build it with -tags mpi and start it with two ranks, choosing Open MPI's
// transport with its options, for example:
//
//	go build -tags mpi -o /tmp/mpbench ./impl/mp/internal/mpbench
//	mpirun -np 2 --mca pml ob1 --mca btl self,vader /tmp/mpbench
//	mpirun -np 2 --mca pml ob1 --mca btl self,tcp /tmp/mpbench
//
// Rank 0 prints the table. -funneled runs impl/mp with every MPI call on its engine
// goroutine (the property mp.funneled), the design before serialized calls, for an A/B
// of the two in alternating runs. Built without the tag it only says how to rebuild.
package main
