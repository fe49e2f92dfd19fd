package tcp

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/impl/internal/impltest"
	"github.com/ibisgo/ibis/ipl"
)

var dataType = ipl.MustPortType(ipl.ConnectionManyToOne, ipl.SerializationData, ipl.ReceiveExplicit,
	ipl.CommunicationReliable, ipl.CommunicationFIFO, ipl.ConnectionUpcalls)

func newTestIbis(t *testing.T, opts ...ipl.Option) ipl.Ibis {
	t.Helper()
	return impltest.NewIbis(t, Name, nil, opts...)
}

// Bad bytes on one connection close that connection only: the port keeps serving others.
func TestBadInputClosesOnlyThatConnection(t *testing.T) { impltest.BadInput(t, Name, nil) }

// A message bigger than the maximum is refused by the sender before it is sent.
func TestOversizeMessageRefused(t *testing.T) { impltest.OversizeRefused(t, Name, nil) }

// A wildcard listen host means every interface: New works and, the registry being on
// loopback, the member publishes its loopback address with the port it listens on.
func TestWildcardHostListensEverywhere(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, host := range []string{"0.0.0.0", "::", ""} {
		ib, err := ipl.New(ctx, ipl.WithImplementation(Name), ipl.WithPortTypes(dataType), ipl.WithListenHost(host))
		if err != nil {
			t.Fatalf("New with host %q: %v", host, err)
		}
		addr := ib.Identifier().Address
		if !strings.HasPrefix(addr, "127.0.0.1:") || strings.Contains(addr, ",") {
			t.Errorf("host %q: published %q, want 127.0.0.1:PORT alone (the registry is on loopback)", host, addr)
		}
		if err := ib.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// A peer that stops in the middle of a message is cut after the message timeout.
func TestStalledSendersAreCut(t *testing.T) { impltest.StalledSenders(t, Name, nil) }

// A connection request from outside the pool is refused.
func TestStrangersRefused(t *testing.T) { impltest.Strangers(t, Name, nil) }

func TestPoolSecret(t *testing.T) { impltest.PoolSecret(t, Name, nil) }

func TestTLS(t *testing.T) { impltest.TLS(t, Name, nil) }

// A bad tcp.spin is refused by New, naming the property; 0 and a duration are taken.
func TestSpinProperty(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, v := range []string{"fast", "-1us", "2s"} {
		_, err := ipl.New(ctx, ipl.WithImplementation(Name), ipl.WithPortTypes(dataType), ipl.WithProperty(PropertySpin, v))
		if err == nil || !errors.Is(err, ipl.ErrInvalidArgument) || !strings.Contains(err.Error(), PropertySpin) {
			t.Fatalf("tcp.spin=%q: %v, want an error naming the property", v, err)
		}
	}
	for _, v := range []string{"0", "5us"} {
		d, err := spinFrom(&ipl.Config{Properties: map[string]string{PropertySpin: v}})
		if err != nil || (v == "0") != (d == 0) {
			t.Fatalf("tcp.spin=%q: %v %v", v, d, err)
		}
	}
}

// A sender keeps to its receiver's smaller message limit.
func TestReceiverLimitRefused(t *testing.T) { impltest.ReceiverLimitRefused(t, Name, nil) }
