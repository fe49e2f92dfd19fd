package main

import (
	"context"
	"fmt"
	"io"

	"github.com/ibisgo/ibis/ipl"

	_ "github.com/ibisgo/ibis/impl/nio" // the gnet event-loop implementation (-impl nio)
	_ "github.com/ibisgo/ibis/impl/tcp" // the TCP implementation (the default)
)

// loadType is the port type of the load: many senders into one port, explicit receive,
// reliable and FIFO per connection; connection upcalls tell the receiver of broken
// connections.
var loadType = ipl.MustPortType(ipl.ConnectionManyToOne, ipl.ConnectionUpcalls, ipl.SerializationData,
	ipl.ReceiveExplicit, ipl.ReceiveTimeout, ipl.CommunicationReliable, ipl.CommunicationFIFO)

// loadPort is the receiver's port name.
const loadPort = "ibis-load"

// runProcess joins the pool, takes part in the election of the receiver and plays its
// role; it returns the exit status.
func runProcess(ctx context.Context, s *settings, stdout, stderr io.Writer) int {
	rank := launchRank()
	ib, err := ipl.New(ctx, append(s.ibisOptions(),
		ipl.WithPortTypes(loadType),
		ipl.WithCapabilities(ipl.ClosedWorld, ipl.ElectionsStrict, ipl.MembershipTotallyOrdered),
		ipl.WithEventHandler(func(e ipl.Event) {
			if e.Type == ipl.EventDied {
				fmt.Fprintf(stderr, "ibis-load: member %s died\n", e.Member)
			}
		}))...)
	if err != nil {
		fmt.Fprintf(stderr, "ibis-load: rank %d: joining the pool: %v\n", rank, err)
		return exitFailure
	}
	code := play(ctx, s, ib, rank, stdout, stderr)
	if err := ib.Close(); err != nil {
		fmt.Fprintf(stderr, "ibis-load: rank %d: closing: %v\n", rank, err)
		code = max(code, exitFailure)
	}
	return code
}

// play elects the receiver and runs this process's part.
func play(ctx context.Context, s *settings, ib ipl.Ibis, rank int32, stdout, stderr io.Writer) int {
	reg := ib.Registry()
	if reg.PoolSize() < 2 {
		fmt.Fprintf(stderr, "ibis-load: the pool has size %d: run at least two processes (ibis-run -np N, N >= 2)\n", reg.PoolSize())
		return exitUsage
	}
	if err := reg.WaitUntilPoolClosed(ctx); err != nil {
		fmt.Fprintf(stderr, "ibis-load: rank %d: waiting for the pool: %v\n", rank, err)
		return exitFailure
	}
	receiver, err := reg.Elect(ctx, "ibis-load-receiver")
	if err != nil {
		fmt.Fprintf(stderr, "ibis-load: rank %d: electing the receiver: %v\n", rank, err)
		return exitFailure
	}
	if receiver != ib.Identifier() {
		if err := send(ctx, s, ib, receiver, rank, stderr); err != nil {
			fmt.Fprintf(stderr, "ibis-load: sender rank %d (%s): %v\n", rank, ib.Identifier(), err)
			return exitFailure
		}
		return exitOK
	}
	var senders []int32
	for _, m := range reg.Members() {
		if m != ib.Identifier() {
			senders = append(senders, int32(m.Number()))
		}
	}
	if len(senders) != reg.PoolSize()-1 {
		fmt.Fprintf(stderr, "ibis-load: receiver: %d senders in the pool of %d\n", len(senders), reg.PoolSize())
		return exitFailure
	}
	res, err := receive(ctx, s, ib, senders, stderr)
	if res != nil {
		res.print(stdout, s.json)
	}
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "ibis-load: receiver rank %d: %v\n", rank, err)
		return exitFailure
	case !res.OK:
		return exitLoss
	}
	return exitOK
}

// launchRank is this process's launch index as its launcher gives it (ipl.LaunchRank),
// -1 when unknown.
func launchRank() int32 { return int32(ipl.LaunchRank()) }
