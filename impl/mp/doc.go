// Package mp is the message-passing implementation of the Ibis portability layer, in
// the manner of the Java MessagePassingIbis: its ports move their bytes through MPI
// (Open MPI, bound through cgo), for clusters where MPI already knows the fast network
// (shared memory inside a node, InfiniBand between nodes) and how to start processes.
//
// # Building and starting
//
// The MPI binding is behind the build tag mpi (go build -tags mpi, with Open MPI's
// development files: apt-get install openmpi-bin libopenmpi-dev). Without the tag the
// package still registers "mp", and opening it fails with ipl.ErrUnsupported and a
// message that says how to rebuild. Programs are started by an MPI launcher, as in
// mpirun -np 4 ./prog -impl mp, or srun --mpi=pmix ./prog -impl mp under SLURM; a
// program started on its own runs as an MPI singleton, a pool of one.
//
// # The pool is MPI_COMM_WORLD
//
// Every rank of the job is a member, the pool is closed-world and its size is the world
// size, and there is no registry server to set up: rank 0 runs the registry embedded
// (registry.StartEmbedded) and broadcasts its address and the pool name (rank 0's
// configured pool name) to the other ranks with MPI_Bcast; every rank then joins it.
// Elections, signals, membership events, closed-world waits and termination are the
// registry's, as in the other implementations. A configured registry address or pool
// size is ignored (and logged). A job on one node keeps the registry on loopback. When
// the job spans several nodes and no host is pinned (IBIS_HOST unset, a wildcard or
// loopback), the registry listens on every interface of rank 0's machine, rank 0
// broadcasts the list of that machine's addresses (docs/CLUSTERS.md, "Addresses") and
// each rank joins the first it reaches; IBIS_HOST on rank 0 pins one. A rank that dies
// makes MPI abort the whole job: the registry's died events and lost connections are
// not seen under mp.
//
// MPI can be initialised once per process, so there is one mp instance per process:
// a second Open while one runs fails with ipl.ErrUnsupported, and so does an Open after
// the instance closed (MPI is finalised then). Close is collective, like MPI_Finalize:
// it returns when every rank has closed its instance (at most mp.closetimeout, default
// 10 minutes, after which MPI is left unfinalised and Close reports the timeout).
//
// # Trust
//
// A pool secret (ipl.WithPoolSecret, IBIS_POOL_SECRET) and TLS (ipl.WithTLS, IBIS_TLS_*)
// still guard the registry, when the pool uses one, but not the connections over MPI:
// there is no socket to check or encrypt, and
// the MPI job is its own trust domain (every rank was started by the same mpirun or srun,
// whose transport the site secures or not). Run mp only where that is acceptable;
// docs/SECURITY.md.
//
// # Connections over MPI
//
// MPI is initialised with MPI_THREAD_SERIALIZED (internal/mpi), and every call is made
// by whichever goroutine holds the engine's progress lock: a sender starts its
// MPI_Isend itself, and a goroutine waiting for MPI (a receive, an in-place send,
// credit) polls for mp.waitspin (200µs) before it blocks, yielding the CPU between
// polls only on an oversubscribed node (more ranks than processors, as Open MPI's
// mpi_yield_when_idle); each poll probes for any message (MPI_Improbe), hands it to
// the connection it belongs to, starts its receive (MPI_Imrecv) and collects completed
// requests (MPI_Testsome), so a waiting receiver finds its own message with no other
// thread involved. A waiter makes up to 64 empty polls in one cgo call, and a
// message of at most 1 KiB is received in the same call that found it (MPI_Mrecv);
// a packet of at most 1 KiB is sent with MPI_Isend from the connection's own buffer
// and tested once, which finds it done under the eager protocol (else the request is
// left to the polls, and the buffer to it), larger small ones from pooled buffers. An engine goroutine, locked to the OS thread that initialised MPI
// and finalises it, polls when nobody else does: it stands by while goroutines poll
// as above and for mp.spin (10ms) after one last found its answer, unless a goroutine
// is blocked waiting for MPI; then, and otherwise, it keeps polling for mp.spin after
// the last work (its own, a send or receive started, a goroutine beginning to block;
// up to a second while a send or receive is still under way, since some MPI
// transports move data only while polled), then sleeps in growing steps up to
// mp.maxsleep (1ms), so an idle process costs about a thousand wake-ups a second and
// a message reaching a process where nobody waits for it waits at most that long; a
// goroutine that begins to block wakes it at once. GOMAXPROCS is raised by one while
// the engine runs, since it holds a scheduler slot whenever it polls. mp.funneled, or
// an MPI library that grants only MPI_THREAD_FUNNELED, gives the older design: every
// call on the engine goroutine, the rest of Go queueing closures for it.
//
// A connection from a send port to a receive port is a virtual stream between two
// ranks, named by the dialling rank and a number it picks, which gives the tags of the
// two directions (see tags.go). core's handshake request and reply travel as MPI
// messages, then the packets of the send port's messages. Small buffers of a packet
// are gathered into messages under 64 KiB (a copy; WritePacket need not wait for them);
// each buffer of 64 KiB or more, which is a bulk packet's view of a typed slice, is sent
// from the caller's memory in place, pinned with runtime.Pinner until MPI is done with
// it, and WritePacket returns then. On the receiving side a message of 64 KiB or more
// stays matched in MPI until the reader asks for it and is received straight into the
// destination slice. Messages are limited only by the receiver's maximum message size;
// buffers over 1 GiB go as several MPI messages.
//
// # Flow control
//
// MPI itself holds back no sender of small messages, so each connection has a window
// of credit of 1 MiB: a sender gets at most that much of small messages (under 64 KiB)
// ahead of its reader on a connection, then waits in WritePacket, as over a socket;
// larger messages stay in MPI until the reader takes them. credit.go has the mechanism.
//
// # Ports
//
// One goroutine per incoming connection feeds it to its receive port, and a one-to-one
// port reads it on the receiving goroutine itself, as over TCP; every port semantics
// (one-to-many, many-to-one, upcalls, numbering, connection handlers) is core's, shared
// with impl/tcp.
package mp
