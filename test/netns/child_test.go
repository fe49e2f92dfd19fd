package netns_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

// The children's parts. Each runs in a host namespace, reports on its standard output in
// lines the parent reads ("addr A", "progress N", "result ..."), and exits 1 with the
// reason on standard error when what it saw breaks a rule it can check itself.

const (
	envRole     = "IBIS_NETNS_ROLE"      // registry, receiver or sender
	envHB       = "IBIS_NETNS_HEARTBEAT" // the registry's heartbeat interval
	envDeath    = "IBIS_NETNS_DEATH"     // the registry's death timeout
	childBound  = 120 * time.Second      // ends a hung child; no case relies on it
	values      = 64                     // int64 values per message
	endOfStream = -1                     // the first value of the sender's last message
	progressGap = 100                    // the receiver reports every this many messages
)

// streamType is a many-to-one port that reports lost connections, as a gatherer's would.
var streamType = ipl.MustPortType(ipl.ConnectionManyToOne, ipl.SerializationData, ipl.ReceiveExplicit,
	ipl.CommunicationReliable, ipl.CommunicationFIFO, ipl.ConnectionDowncalls)

func runChild(role string) int {
	ctx, cancel := context.WithTimeout(context.Background(), childBound)
	defer cancel()
	var err error
	switch role {
	case "registry":
		err = runRegistry(ctx)
	case "receiver":
		err = runReceiver(ctx)
	case "sender":
		err = runSender(ctx)
	default:
		err = fmt.Errorf("unknown role %q", role)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", role, err)
		return 1
	}
	return 0
}

// runRegistry serves the pool on this host until SIGTERM.
func runRegistry(ctx context.Context) error {
	hb, err := time.ParseDuration(os.Getenv(envHB))
	if err != nil {
		return err
	}
	death, err := time.ParseDuration(os.Getenv(envDeath))
	if err != nil {
		return err
	}
	srv, err := registry.StartEmbedded(os.Getenv(ipl.EnvHost)+":0",
		registry.WithHeartbeatInterval(hb), registry.WithDeathTimeout(death))
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Printf("addr %s\n", srv.Addr())
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return nil
}

func newIbis(ctx context.Context, tag string) (ipl.Ibis, error) {
	return ipl.New(ctx, ipl.WithPortTypes(streamType), ipl.WithTag(tag),
		ipl.WithCapabilities(ipl.ElectionsStrict, ipl.MembershipTotallyOrdered))
}

// runReceiver takes the stream, checking that every message is whole and in order, until
// the end-of-stream message or until the sender's connection is lost (and everything left
// is taken), then prints "result received=N end=B".
func runReceiver(ctx context.Context) error {
	ib, err := newIbis(ctx, "receiver")
	if err != nil {
		return err
	}
	defer ib.Close()
	rp, err := ib.CreateReceivePort(ctx, streamType, "stream")
	if err != nil {
		return err
	}
	if _, err := ib.Registry().Elect(ctx, "receiver"); err != nil {
		return err
	}
	received, lost, end := int64(0), false, false
	for !end {
		if !lost {
			l, err := rp.LostConnections()
			if err != nil {
				return err
			}
			lost = len(l) > 0
		}
		wait := 50 * time.Millisecond
		if lost {
			wait = time.Second // the connection is cut: take what is left, then stop
		}
		rctx, cancel := context.WithTimeout(ctx, wait)
		m, err := rp.Receive(rctx)
		cancel()
		switch {
		case errors.Is(err, ipl.ErrTimeout) && ctx.Err() == nil && !lost:
			continue
		case errors.Is(err, ipl.ErrTimeout) && ctx.Err() == nil:
			fmt.Printf("result received=%d end=false\n", received)
			return rp.Close()
		case err != nil:
			return fmt.Errorf("receive after %d messages: %w", received, err)
		}
		var rerr error
		for j := int64(0); j < values && rerr == nil; j++ {
			var v int64
			v, rerr = m.ReadInt64()
			switch {
			case rerr != nil:
			case j == 0 && v == endOfStream:
				end = true
			case !end && v != received*values+j:
				return fmt.Errorf("message %d, value %d: got %d (a message lost, reordered or damaged)", received, j, v)
			}
		}
		_, ferr := m.Finish()
		if err := errors.Join(rerr, ferr); err != nil {
			// A message the cut interrupted is thrown away whole; anything else is wrong.
			if !errors.Is(err, ipl.ErrConnectionLost) {
				return fmt.Errorf("message %d ended with %w; want a whole message or ErrConnectionLost", received, err)
			}
			continue
		}
		if !end {
			received++
			if received%progressGap == 0 {
				fmt.Printf("progress %d\n", received)
			}
		}
	}
	fmt.Printf("result received=%d end=true\n", received)
	return rp.Close()
}

// runSender streams numbered messages to the receiver until "stop" arrives on its standard
// input (then it sends the end-of-stream message) or a send fails, closes its port and its
// instance, and prints "result handed=H taken=T reported=B lost=B" and the errors: H
// messages were handed over (Finish nil), T of them were taken by the receiver as far as
// the sender was told (H when it was told of no loss), reported says whether a loss was
// reported, lost whether the errors match ipl.ErrConnectionLost.
func runSender(ctx context.Context) error {
	var stop atomic.Bool
	go func() {
		// Ends when the parent closes standard input or the process exits.
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			if sc.Text() == "stop" {
				stop.Store(true)
			}
		}
	}()
	ib, err := newIbis(ctx, "sender")
	if err != nil {
		return err
	}
	defer ib.Close()
	recv, err := ib.Registry().ElectionResult(ctx, "receiver")
	if err != nil {
		return err
	}
	sp, err := ib.CreateSendPort(streamType, "stream")
	if err != nil {
		return err
	}
	if err := sp.Connect(ctx, recv, "stream"); err != nil {
		return err
	}
	var handed int64
	var errs []error
	send := func(first int64) error {
		m, err := sp.NewMessage(ctx)
		if err != nil {
			return err
		}
		var werr error
		for j := int64(0); j < values && werr == nil; j++ {
			v := first + j
			if first == endOfStream {
				v = endOfStream
			}
			werr = m.WriteInt64(v)
		}
		_, ferr := m.Finish()
		return errors.Join(werr, ferr)
	}
	for ctx.Err() == nil && !stop.Load() {
		if err := send(handed * values); err != nil {
			errs = append(errs, err)
			break
		}
		handed++
	}
	if len(errs) == 0 {
		errs = append(errs, send(endOfStream))
	}
	errs = append(errs, sp.Close(), ib.Close())
	err = errors.Join(errs...)
	taken, reported := handed, false
	if err != nil {
		if i := strings.Index(err.Error(), "after taking "); i >= 0 {
			if _, serr := fmt.Sscan(err.Error()[i+len("after taking "):], &taken); serr != nil {
				return fmt.Errorf("reading the number taken from %q: %v", err, serr)
			}
			reported = strings.Contains(err.Error(), "thrown away")
		}
	}
	fmt.Printf("result handed=%d taken=%d reported=%t lost=%t\n", handed, taken, reported, errors.Is(err, ipl.ErrConnectionLost))
	fmt.Printf("errors %q\n", fmt.Sprint(err))
	return nil
}
