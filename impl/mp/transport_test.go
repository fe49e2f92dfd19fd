//go:build mpi

package mp_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ibisgo/ibis/impl/mp"
	"github.com/ibisgo/ibis/impl/mp/internal/mpi"
	"github.com/ibisgo/ibis/impl/mp/internal/mpitest"
	"github.com/ibisgo/ibis/ipl"
)

var (
	ringType = ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationData, ipl.ReceiveExplicit,
		ipl.CommunicationReliable, ipl.CommunicationFIFO)
	gatherType = ipl.MustPortType(ipl.ConnectionManyToOne, ipl.SerializationObject, ipl.ReceiveExplicit,
		ipl.CommunicationReliable, ipl.CommunicationFIFO, ipl.CommunicationNumbered, ipl.ConnectionDowncalls)
)

// The transport under mpirun, from a pool of one to three ranks, and started without
// mpirun (an MPI singleton, np=0 here), a pool of one.
func TestTransportUnderMPIRun(t *testing.T) {
	for _, np := range []int{0, 1, 2, 3} {
		t.Run(fmt.Sprintf("np=%d", np), func(t *testing.T) {
			mpitest.Run(t, np, "^TestTransportRank$", 90*time.Second)
		})
	}
	// Open MPI's TCP transport instead of shared memory: large messages move only while
	// the engines poll.
	t.Run("np=2,btl=tcp", func(t *testing.T) {
		t.Setenv(mpitest.EnvArgs, "--mca pml ob1 --mca btl self,tcp")
		mpitest.Run(t, 2, "^TestTransportRank$", 90*time.Second)
	})
	// The older design, every MPI call on the engine goroutine (mp.funneled), which an
	// MPI library without MPI_THREAD_SERIALIZED also gets.
	t.Run("np=2,funneled", func(t *testing.T) {
		t.Setenv(mpitest.EnvArgs, "--mca pml ob1 --mca btl self,tcp")
		mpitest.Run(t, 2, "^TestTransportRank$", 90*time.Second, mp.EnvFunneled+"=true")
	})
}

// ringSizes are the float64 counts of the ring's messages: empty, gathered into one MPI
// message, and large enough to go in place on both sides, including a slice read into a
// larger destination and one split over reads.
var ringSizes = []int{0, 1, 500, 9000, 300_000, 1 << 20}

// TestTransportRank is one rank's part: every rank sends a ring of messages to the next
// rank and a numbered object message to rank 0; rank 0 checks the pool's shape.
func TestTransportRank(t *testing.T) {
	rank, ok := mpitest.Rank()
	if !ok {
		t.Skip("runs as a rank of TestTransportUnderMPIRun")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ib, err := ipl.New(ctx, ipl.WithImplementation(mp.Name), ipl.WithPortTypes(ringType, gatherType),
		ipl.WithCapabilities(ipl.ElectionsStrict, ipl.ClosedWorld), ipl.WithTag(fmt.Sprintf("rank-%d", rank)))
	if err != nil {
		t.Fatal(err)
	}
	eng, _ := mpi.Current()
	if funneled := os.Getenv(mp.EnvFunneled) == "true"; eng.Serialized() == funneled {
		t.Errorf("%s=%v, but the engine is serialized=%v", mp.EnvFunneled, funneled, eng.Serialized())
	}
	if _, err := ipl.New(ctx, ipl.WithImplementation(mp.Name), ipl.WithPortTypes(ringType)); !errors.Is(err, ipl.ErrUnsupported) {
		t.Errorf("a second mp instance in one process: %v, want ErrUnsupported", err)
	}
	reg := ib.Registry()
	if err := reg.WaitUntilPoolClosed(ctx); err != nil {
		t.Fatal(err)
	}
	members := reg.Members()
	np := reg.PoolSize()
	if len(members) != np {
		t.Fatalf("%d members in a pool of %d", len(members), np)
	}
	byRank := map[string]ipl.IbisIdentifier{}
	for _, m := range members {
		byRank[m.Address] = m
	}
	next, ok := byRank[fmt.Sprintf("mpi:%d", (rank+1)%np)]
	if !ok {
		t.Fatalf("no member at the next rank among %v", members)
	}
	leader, err := reg.Elect(ctx, "leader")
	if err != nil {
		t.Fatal(err)
	}

	ring, err := ib.CreateReceivePort(ctx, ringType, "ring")
	if err != nil {
		t.Fatal(err)
	}
	var gather ipl.ReceivePort
	if rank == 0 {
		if gather, err = ib.CreateReceivePort(ctx, gatherType, "gather"); err != nil {
			t.Fatal(err)
		}
	}
	sendErr := make(chan error, 2)
	go func() { sendErr <- sendRing(ctx, ib, next, rank) }()
	go func() { sendErr <- sendGather(ctx, ib, byRank["mpi:0"], rank) }()

	prev := (rank + np - 1) % np
	for _, n := range ringSizes {
		m, err := ring.Receive(ctx)
		if err != nil {
			t.Fatalf("receive %d floats: %v", n, err)
		}
		got := make([]float64, n+3) // a larger destination than the slice
		if err := m.ReadArray(got[:n]); err != nil {
			t.Fatalf("read %d floats: %v", n, err)
		}
		for i := range n {
			if got[i] != float64(prev*1_000_000+i) {
				t.Fatalf("float %d of %d from rank %d is %v", i, n, prev, got[i])
			}
		}
		if n > 0 { // the same again, read in two halves: one in-place body shared by two reads
			half := make([]float64, n/2)
			rest := make([]float64, n-n/2)
			if err := errors.Join(m.ReadArray(half), m.ReadArray(rest)); err != nil {
				t.Fatalf("read %d floats in two halves: %v", n, err)
			}
			if whole := append(half, rest...); whole[n-1] != float64(prev*1_000_000+n-1) || whole[0] != float64(prev*1_000_000) {
				t.Fatalf("halves of %d floats from rank %d: %v ... %v", n, prev, whole[0], whole[n-1])
			}
		}
		s, err := m.ReadString()
		if err != nil || s != fmt.Sprintf("end of %d", n) {
			t.Fatalf("trailer %q, %v", s, err)
		}
		if _, err := m.Finish(); err != nil {
			t.Fatal(err)
		}
	}
	if rank == 0 {
		seen := map[string]bool{}
		for range np {
			m, err := gather.Receive(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var v map[string]int
			if err := m.ReadObject(&v); err != nil {
				t.Fatal(err)
			}
			seen[m.Origin().Ibis.Address] = true
			if _, err := m.Finish(); err != nil {
				t.Fatal(err)
			}
		}
		if len(seen) != np {
			t.Errorf("gathered from %v, want %d ranks", seen, np)
		}
		if leader.Address != "mpi:0" && leader.Address == "" {
			t.Errorf("leader %v", leader)
		}
	}
	for range 2 {
		if err := <-sendErr; err != nil {
			t.Error(err)
		}
	}
	if err := ib.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if _, err := ipl.New(ctx, ipl.WithImplementation(mp.Name), ipl.WithPortTypes(ringType)); !errors.Is(err, ipl.ErrUnsupported) {
		t.Errorf("mp after MPI_Finalize: %v, want ErrUnsupported", err)
	}
}

func sendRing(ctx context.Context, ib ipl.Ibis, to ipl.IbisIdentifier, rank int) error {
	sp, err := ib.CreateSendPort(ringType, "ring-out")
	if err != nil {
		return err
	}
	defer sp.Close()
	if err := sp.Connect(ctx, to, "ring"); err != nil {
		return fmt.Errorf("connect ring: %w", err)
	}
	for _, n := range ringSizes {
		data := make([]float64, n)
		for i := range data {
			data[i] = float64(rank*1_000_000 + i)
		}
		m, err := sp.NewMessage(ctx)
		if err != nil {
			return err
		}
		if err := m.WriteArray(data); err != nil {
			return err
		}
		if n > 0 {
			if err := m.WriteArray(data); err != nil {
				return err
			}
		}
		if err := m.WriteString(fmt.Sprintf("end of %d", n)); err != nil {
			return err
		}
		if _, err := m.Finish(); err != nil {
			return fmt.Errorf("send %d floats: %w", n, err)
		}
	}
	return nil
}

func sendGather(ctx context.Context, ib ipl.Ibis, to ipl.IbisIdentifier, rank int) error {
	sp, err := ib.CreateSendPort(gatherType, "gather-out")
	if err != nil {
		return err
	}
	defer sp.Close()
	if err := sp.Connect(ctx, to, "gather"); err != nil {
		return fmt.Errorf("connect gather: %w", err)
	}
	m, err := sp.NewMessage(ctx)
	if err != nil {
		return err
	}
	if err := m.WriteObject(map[string]int{"rank": rank}); err != nil {
		return err
	}
	_, err = m.Finish()
	return err
}
