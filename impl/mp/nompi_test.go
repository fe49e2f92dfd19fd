//go:build !mpi

package mp_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ibisgo/ibis/impl/mp"
	_ "github.com/ibisgo/ibis/impl/tcp"
	"github.com/ibisgo/ibis/ipl"
)

// Without the build tag mpi, mp is registered and refuses to start, saying how to rebuild.
func TestOpenWithoutMPITagSaysHowToRebuild(t *testing.T) {
	if mp.WithMPI {
		t.Fatal("WithMPI is true in a build without the tag mpi")
	}
	pt := ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationByte, ipl.ReceiveExplicit)
	ib, err := ipl.New(context.Background(), ipl.WithImplementation(mp.Name), ipl.WithPortTypes(pt))
	if err == nil {
		_ = ib.Close()
		t.Fatal("mp opened without MPI")
	}
	if !errors.Is(err, ipl.ErrUnsupported) {
		t.Errorf("error %v does not match ipl.ErrUnsupported", err)
	}
	for _, want := range []string{"-tags mpi", "openmpi-bin", "libopenmpi-dev"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// mp's properties are known in a build without MPI too: a program that sets one for its
// runs under mp is not refused, as a misspelt property is, when it runs on tcp.
func TestPropertiesKnownWithoutMPITag(t *testing.T) {
	ib, err := ipl.New(context.Background(), ipl.WithImplementation("tcp"), ipl.WithPoolSize(1),
		ipl.WithProperty(mp.PropFunneled, "true"), ipl.WithProperty(mp.PropSpin, "1ms"))
	if err != nil {
		t.Fatalf("tcp with mp's properties set: %v", err)
	}
	_ = ib.Close()
}
