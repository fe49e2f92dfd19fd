package nio

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"

	"github.com/ibisgo/ibis/impl/internal/core"
	"github.com/ibisgo/ibis/impl/internal/sockets"
	"github.com/ibisgo/ibis/internal/tlsconf"
	"github.com/ibisgo/ibis/ipl"
)

// Name is the implementation's registered name.
const Name = "nio"

// PropertyLoops (or $IBIS_NIO_LOOPS) sets how many event loops serve the nonblocking
// flavour; the default is GOMAXPROCS.
const (
	PropertyLoops = "nio.loops"
	EnvLoops      = "IBIS_NIO_LOOPS"
)

// PropertySpin (or $IBIS_NIO_SPIN) sets how long the reader of a blocking-flavour
// receive port polls an empty socket before it parks, as tcp.spin does for impl/tcp
// (see impl/internal/sockets/spin.go); an event loop of the other flavours polls for
// twice as long after it served a connection (loopspin.go): a Go duration, "0" for no
// polling; default 20us.
const (
	PropertySpin = "nio.spin"
	EnvSpin      = "IBIS_NIO_SPIN"
)

func init() {
	ipl.Register(Name, 10, driver{})
	ipl.RegisterPropertyEnv(PropertySend, EnvSend)
	ipl.RegisterPropertyEnv(PropertyReceive, EnvReceive)
	ipl.RegisterPropertyEnv(PropertyLoops, EnvLoops)
	ipl.RegisterPropertyEnv(PropertySpin, EnvSpin)
}

type driver struct{}

// Capabilities: every port capability of the IPL, the six flavour capabilities, and
// every Ibis capability the central registry provides.
func (driver) Capabilities() []string {
	caps := append(append(core.PortCapabilities(), core.RegistryCapabilities()...), ipl.Malleable)
	return append(caps, SendPortBlocking, SendPortNonBlocking, SendPortThread,
		ReceivePortBlocking, ReceivePortNonBlocking, ReceivePortThread)
}

func (driver) Open(ctx context.Context, cfg *ipl.Config) (ipl.Ibis, error) {
	ch, err := newChooser(cfg)
	if err != nil {
		return nil, err
	}
	loops, err := eventLoops(cfg)
	if err != nil {
		return nil, err
	}
	spin, err := sockets.SpinFrom(cfg, Name, PropertySpin, EnvSpin)
	if err != nil {
		return nil, err
	}
	for _, pt := range cfg.PortTypes {
		if _, err := ch.sendFlavour(pt); err != nil {
			return nil, err
		}
		if _, err := ch.receiveFlavour(pt); err != nil {
			return nil, err
		}
	}
	ib, err := core.Open(ctx, cfg, Name, newTransport(cfg, ch, loops, spin))
	if err != nil && errors.Is(err, ipl.ErrUnsupported) && (tlsconf.Files{Cert: cfg.TLSCert, Key: cfg.TLSKey, CA: cfg.TLSCA}).IsSet() {
		// gnet has no TLS layer (docs/SECURITY.md); the blocking implementation has.
		return nil, fmt.Errorf("%w; use -impl tcp for TLS", err)
	}
	return ib, err
}

func eventLoops(cfg *ipl.Config) (int, error) {
	v, from := cfg.Property(PropertyLoops), "property "+PropertyLoops+" (or $"+EnvLoops+")"
	if v == "" {
		return runtime.GOMAXPROCS(0), nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 1024 {
		return 0, fmt.Errorf("nio: %s = %q: want a number of event loops from 1 to 1024", from, v)
	}
	return n, nil
}
