//go:build mpi

package mp_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ibisgo/ibis/impl/mp"
	"github.com/ibisgo/ibis/impl/mp/internal/mpitest"
	"github.com/ibisgo/ibis/ipl"
)

// Streams of messages of many sizes, each byte checked: messages the engine's poll
// receives itself (up to mpi.InlineMax) and just over it, messages that reuse a
// stream's chunks and buffers and ones too large to be kept, and in-place ones among
// them, between two ranks in both directions at once, over shared memory and TCP.
func TestMessageSizesUnderMPIRun(t *testing.T) {
	t.Run("vader", func(t *testing.T) {
		t.Setenv(mpitest.EnvArgs, "--mca pml ob1 --mca btl self,vader")
		mpitest.Run(t, 2, "^TestMessageSizesRank$", 90*time.Second)
	})
	t.Run("tcp", func(t *testing.T) {
		t.Setenv(mpitest.EnvArgs, "--mca pml ob1 --mca btl self,tcp")
		mpitest.Run(t, 2, "^TestMessageSizesRank$", 90*time.Second)
	})
	// An eager limit below the small messages: they are not done when sent, and both
	// ranks send at once.
	t.Run("vader-eager-256", func(t *testing.T) {
		t.Setenv(mpitest.EnvArgs, "--mca pml ob1 --mca btl self,vader --mca btl_vader_eager_limit 256")
		mpitest.Run(t, 2, "^TestMessageSizesRank$", 90*time.Second)
	})
}

// The same streams from a rank to itself, through MPI's self transport, whose eager
// limit (1 KiB with the header) is below the largest message the engine sends with a
// blocking MPI_Send.
func TestMessageSizesToSelfUnderMPIRun(t *testing.T) {
	t.Setenv(selfEnv, "1")
	t.Setenv(mpitest.EnvArgs, "--mca pml ob1 --mca btl self,vader")
	mpitest.Run(t, 1, "^TestMessageSizesRank$", 90*time.Second)
}

// selfEnv has TestMessageSizesRank send to its own rank.
const selfEnv = "IBIS_MP_TEST_SELF"

// sizeCycle are the byte counts of the arrays of successive messages.
var sizeCycle = []int{1, 0, 3, 940, 980, 1000, 1005, 1010, 1011, 1012, 1024, 1025, 2000, 4090, 4100, 9000, 70_000, 5, 40_000, 7}

var sizeMessages = 3 * len(sizeCycle) * 20

// fill is the content of message i's array of n bytes.
func fill(i, n int) []byte {
	b := make([]byte, n)
	for j := range b {
		b[j] = byte(i*31 + j*7 + j>>8)
	}
	return b
}

func TestMessageSizesRank(t *testing.T) {
	rank, ok := mpitest.Rank()
	if !ok {
		t.Skip("runs as a rank of TestMessageSizesUnderMPIRun")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ib, err := ipl.New(ctx, ipl.WithImplementation(mp.Name), ipl.WithPortTypes(ringType))
	if err != nil {
		t.Fatal(err)
	}
	defer ib.Close()
	if err := ib.Registry().WaitUntilPoolClosed(ctx); err != nil {
		t.Fatal(err)
	}
	peerRank := 1 - rank
	if os.Getenv(selfEnv) != "" {
		peerRank = rank
	}
	var peer ipl.IbisIdentifier
	for _, m := range ib.Registry().Members() {
		if m.Address == fmt.Sprintf("mpi:%d", peerRank) {
			peer = m
		}
	}
	rp, err := ib.CreateReceivePort(ctx, ringType, "sizes")
	if err != nil {
		t.Fatal(err)
	}
	defer rp.Close()
	sp, err := ib.CreateSendPort(ringType, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	if err := sp.Connect(ctx, peer, "sizes"); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		for i := range sizeMessages {
			m, err := sp.NewMessage(ctx)
			if err == nil {
				err = m.WriteInt64(int64(i))
			}
			if err == nil {
				err = m.WriteArray(fill(i, sizeCycle[i%len(sizeCycle)]))
			}
			if err == nil {
				_, err = m.Finish()
			}
			if err != nil {
				errc <- fmt.Errorf("message %d: %w", i, err)
				return
			}
		}
		errc <- nil
	}()
	for i := range sizeMessages {
		m, err := rp.Receive(ctx)
		if err != nil {
			t.Fatalf("receive %d: %v", i, err)
		}
		got, err := m.ReadInt64()
		if err != nil || got != int64(i) {
			t.Fatalf("message %d carries number %d (%v)", i, got, err)
		}
		n := sizeCycle[i%len(sizeCycle)]
		b := make([]byte, n)
		if err := m.ReadArray(b); err != nil {
			t.Fatalf("message %d, %d bytes: %v", i, n, err)
		}
		if want := fill(i, n); !bytes.Equal(b, want) {
			t.Fatalf("message %d, %d bytes: the bytes differ", i, n)
		}
		if _, err := m.Finish(); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}
