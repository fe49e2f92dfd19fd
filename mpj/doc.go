// Package mpj is MPI-style message passing on the Ibis portability layer: ranks, tags,
// point-to-point messages and collectives, for programs ported from MPI (or written in
// its style) that should run on any Ibis implementation (tcp, nio, mp) and under any
// launcher (ibis-run, mpirun, srun).
//
// # World and ranks
//
// New creates an Ibis and its world; Init makes the world of an Ibis the program
// created itself (declaring PortTypes). The pool must be closed-world: its size is
// the world's size. Every process must call Init, as MPI_Init. Ranks are agreed on by
// all processes and follow the launcher:
//
//  1. WithRank, when the program gives one;
//  2. else, under mp (mpirun, srun), the MPI rank, which mp's Ibis gives through
//     ipl.LaunchRankOf;
//  3. else the launcher's rank, ipl.LaunchRank: IBIS_RANK, which ibis-run sets (so
//     that a process's "[N]" output prefix and its rank are the same number), else
//     the rank that mpirun or srun gives tcp and nio processes;
//  4. else, when no process has any of these, the registry's join order (the members
//     sorted by join number, ipl.IbisIdentifier.Number).
//
// The processes gather each other's launch ranks in join order, so they all decide
// alike; launch ranks that are not a permutation of 0..size-1, or that only some
// processes have, fail Init on every process with ErrRanks.
//
// # Point-to-point
//
// Buffers are slices of a primitive type ([]float64, []int32, []byte, []bool, ...;
// see Datatype); nil is an empty message. Point-to-point messages also take:
//
//   - 2-D slices ([][]float64, ...; rows may differ in length). A 2-D buffer is its rows
//     in order, like a contiguous MPI buffer: the count is all its elements, and the
//     receiver may hold them in a 1-D slice or a 2-D one of any shape with room enough,
//     filled row by row. The rows go from and to the program's memory, not copied.
//   - Slices of objects (any other element type: []Body, []string, []any; Datatype
//     Object). Their values travel msgpack-encoded (exported fields, msgpack tags); the
//     element type's name travels with them and must be the receive buffer's. A message of
//     objects that arrives before its receive is queued as its encoding and decoded into
//     the receive buffer when one matches, so what a corrupt message can make the receiver
//     allocate is bounded by the buffer it gave. A value msgpack cannot encode (a channel,
//     a function) fails the Send before anything is sent.
//   - Pack and Unpack (MPI_Pack, MPI_Unpack): several buffers of different types in one
//     []byte, sent as an ordinary []byte message; PackSize says how much Pack appends.
//
// Collectives take 1-D primitive slices only: a 2-D slice or objects given to one fail
// with ipl.ErrUnsupported (send them point-to-point, or Pack them into a []byte first).
//
// The element type travels with the message: a receive into a slice of another type
// fails with ErrTypeMismatch, into a slice too short with ErrTruncated (never a silent
// truncation); the message is consumed either way. Status reports source, tag, element
// count and type (Elem names an object type). AnySource and AnyTag are wildcards;
// messages from one sender on one communicator with one tag arrive in the order they were
// sent (MPI's non-overtaking rule), whatever their size.
//
// How messages move: each process has one many-to-one receive port into which every
// peer has connected one send port (at Init). Every message starts with a header
// (communicator context, source rank, tag, element type, count). One dispatcher
// goroutine per process drains the receive port and never waits for the program: a
// message that matches a posted receive (Irecv, or a Recv already waiting) is read
// straight into that receive's buffer; any other is read into a buffer of its own and
// queued until a receive or probe asks for it. So standard-mode Send never waits for a
// receive, at any size: the eager limit is unlimited, "both send, then both receive"
// never deadlocks, and large messages cannot block the port for others. The price is
// memory: messages sent ahead of their receives are held by the receiver, bounded by
// what the program sends ahead. Ssend waits until the receiver has matched its message;
// Isend completes before it returns. A message to the process itself is copied. A
// message over the message limit (IBIS_MAX_MESSAGE_SIZE, 1 GiB by default, or the
// receiver's, if smaller) fails its Send with ipl.ErrTooLarge. Nothing of it is sent,
// unless its buffer is 2-D and rows went out before the one over the limit: the receive
// that takes it then fails, and the world goes on.
//
// # Communicators
//
// Dup and Split make communicators over the same or fewer processes. Every
// communicator has its own context id, agreed on collectively (the maximum of the
// members' lowest unused ids), for its point-to-point traffic and the next id for its
// collectives: no message of one communicator ever matches a receive of another, and
// a program's messages never match a collective's.
//
// # Collectives
//
// Barrier (dissemination), Bcast (binomial tree), Reduce (binomial tree), Allreduce
// (recursive doubling, with a fold for sizes that are not powers of two; above 64 KiB
// Rabenseifner's reduce-scatter and allgather, which brackets the operands exactly as
// recursive doubling does, so the size of a vector never changes its bits), Gather,
// Gatherv, Scatter and Scatterv (binomial trees; the v-variants need the counts at the
// root only), Allgather and Allgatherv (ring), Alltoall and Alltoallv (pairwise
// exchange), Scan and Exscan (recursive doubling), Reduce_scatter and
// Reduce_scatter_block (pairwise exchange, each rank folding its block). No algorithm
// loops over the ranks at a root. Reductions take an Op: Sum, Prod, Max, Min on every
// numeric type; logical ops on []bool; bitwise ops on integers; MaxLoc and MinLoc on
// (value, index) pairs stored flat in one numeric slice; or an operator NewOp makes
// from a Go function, commutative or not. Operands are combined in an order fixed by
// the ranks, never by arrival, and in rank order for an operator that is not
// commutative: a result is the same in every run with the same number of processes,
// and Allreduce's is bit-identical on every rank, floating point included. Different
// collectives (Reduce and Allreduce, say) and different process counts may bracket a
// floating-point sum differently, as in MPI. Reduce and the large Allreduce post their
// receives before they send, so their parts land in place; their temporaries of 64 KiB
// and more are kept in a pool between calls (given back to the collector at its
// discretion, as sync.Pool does).
//
// # Failures and shutdown
//
// Every blocking call takes a context. When a peer's connection breaks (it died, even
// by SIGKILL, or the network broke), every pending and later operation of the world
// fails with an error matching ipl.ErrConnectionLost, instead of hanging: a
// *PeerLostError, one short line naming both ranks ("mpj: rank 0 lost peer rank 2 (it
// died or the connection broke: EOF)"), since every rank prints it. When a peer
// closes its world cleanly (Close without Finalize, on its error path), its
// connection ends after its last message, so what still waits for that peer (a
// receive from its rank, in a program or inside a collective; an Ssend to it) fails
// with an error matching ipl.ErrConnectionLost, as do later sends to it and receives
// from it that no queued message satisfies; receives from AnySource wait on, since
// another rank may still send. A rank waiting only for a survivor learns of the
// failure when that survivor closes in turn, which a program's error path does.
// Under mp a dead rank makes MPI abort the whole job. Finalize is the collective end
// (a barrier, then Close); Close ends the world at once. No goroutine of mpj outlives
// Close.
package mpj
