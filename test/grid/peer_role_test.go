package grid_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// The route checker's part, a role of the test binary on each host. Each peer joins the
// pool (all from the environment: registry, pool, size, implementation, hub, TLS, pool
// secret), connects a send port of its own to every other peer's receive port, sends one
// checksummed message on each, checks the messages it receives, and prints per send port
//
//	route from=hA to=hB made=1 reversed=R relayed=L
//
// and per message received "received from=hB bytes=N". It exits 1, saying why on
// standard error, when a message is damaged or anything fails.

const (
	envRole     = "IBIS_GRID_ROLE"   // the part this process plays: peer
	roleBound   = 3 * time.Minute    // ends a hung peer; no run relies on it
	payloadSize = 256 << 10          // bytes per message: many segments, TLS records
	doneSignal  = "grid-routes-done" // a peer has received every message it waits for
	inPort      = "in"
)

// routeType is a many-to-one port: every other peer connects to a peer's one receive port.
var routeType = ipl.MustPortType(ipl.ConnectionManyToOne, ipl.SerializationData, ipl.ReceiveExplicit,
	ipl.CommunicationReliable, ipl.CommunicationFIFO)

func runRole(role string) int {
	ctx, cancel := context.WithTimeout(context.Background(), roleBound)
	defer cancel()
	var err error
	switch role {
	case "peer":
		err = runPeer(ctx)
	default:
		err = fmt.Errorf("unknown role %q", role)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", role, err)
		return 1
	}
	return 0
}

func runPeer(ctx context.Context) error {
	name, err := os.Hostname() // the virtual host's name, h1 .. h6
	if err != nil {
		return err
	}
	ib, err := ipl.New(ctx, ipl.WithPortTypes(routeType), ipl.WithTag(name),
		ipl.WithCapabilities(ipl.MembershipTotallyOrdered, ipl.Signals))
	if err != nil {
		return fmt.Errorf("%s: joining the pool: %w", name, err)
	}
	defer ib.Close()
	rp, err := ib.CreateReceivePort(ctx, routeType, inPort)
	if err != nil {
		return err
	}
	defer rp.Close()
	reg := ib.Registry()
	if err := reg.WaitUntilPoolClosed(ctx); err != nil {
		return fmt.Errorf("%s: waiting for the pool: %w", name, err)
	}
	var others []ipl.IbisIdentifier
	for _, m := range reg.Members() {
		if m.ID != ib.Identifier().ID {
			others = append(others, m)
		}
	}
	sort.Slice(others, func(i, j int) bool { return others[i].Tag < others[j].Tag })

	received := make(chan error, 1)
	go func() { received <- receiveAll(ctx, rp, len(others)) }()

	ports := make([]ipl.SendPort, len(others))
	defer func() {
		for _, sp := range ports {
			if sp != nil {
				_ = sp.Close()
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make([]error, len(others))
	for i, to := range others {
		wg.Go(func() { ports[i], errs[i] = sendTo(ctx, ib, name, to) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s: %w", name, err) // the deferred closes end the receiver
	}
	if err := <-received; err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	// Nobody closes before every peer has every message: a closing member would take
	// the connections to it down.
	if err := reg.Signal(ctx, doneSignal, others...); err != nil {
		return fmt.Errorf("%s: signalling the others: %w", name, err)
	}
	if err := waitDone(ctx, reg, len(others)); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	for i, sp := range ports {
		s := sp.Stats()
		fmt.Printf("route from=%s to=%s made=%d reversed=%d relayed=%d\n", name, others[i].Tag,
			s.ConnectionsMade, s.ConnectionsReversed, s.ConnectionsRelayed)
	}
	return nil
}

// sendTo connects a send port to to's receive port and sends one message on it: this
// peer's name, a random payload and its SHA-256.
func sendTo(ctx context.Context, ib ipl.Ibis, name string, to ipl.IbisIdentifier) (ipl.SendPort, error) {
	sp, err := ib.CreateSendPort(routeType, "to-"+to.Tag)
	if err != nil {
		return nil, err
	}
	if err := sp.Connect(ctx, to, inPort); err != nil {
		return sp, fmt.Errorf("connecting to %s: %w", to.Tag, err)
	}
	payload := make([]byte, payloadSize)
	_, _ = rand.Read(payload)
	sum := sha256.Sum256(payload)
	m, err := sp.NewMessage(ctx)
	if err != nil {
		return sp, fmt.Errorf("a message to %s: %w", to.Tag, err)
	}
	err = errors.Join(m.WriteString(name), m.WriteInt(len(payload)), m.WriteArray(payload), m.WriteArray(sum[:]))
	if _, ferr := m.Finish(); err != nil || ferr != nil {
		return sp, fmt.Errorf("sending to %s: %w", to.Tag, errors.Join(err, ferr))
	}
	return sp, nil
}

// receiveAll takes n messages, one from each other peer, and checks each against its
// checksum.
func receiveAll(ctx context.Context, rp ipl.ReceivePort, n int) error {
	seen := map[string]bool{}
	for len(seen) < n {
		m, err := rp.Receive(ctx)
		if err != nil {
			return fmt.Errorf("receiving message %d of %d: %w", len(seen)+1, n, err)
		}
		from, err := m.ReadString()
		if err != nil {
			_, _ = m.Finish()
			return err
		}
		size, err := m.ReadInt()
		if err != nil || size != payloadSize {
			_, _ = m.Finish()
			return fmt.Errorf("the message from %s: a payload of %d bytes (%v), want %d", from, size, err, payloadSize)
		}
		payload, sum := make([]byte, size), make([]byte, sha256.Size)
		err = errors.Join(m.ReadArray(payload), m.ReadArray(sum))
		if _, ferr := m.Finish(); err != nil || ferr != nil {
			return fmt.Errorf("the message from %s: %w", from, errors.Join(err, ferr))
		}
		if got := sha256.Sum256(payload); !bytes.Equal(got[:], sum) {
			return fmt.Errorf("the message from %s arrived damaged: its checksum does not match", from)
		}
		if seen[from] {
			return fmt.Errorf("a second message from %s", from)
		}
		seen[from] = true
		fmt.Printf("received from=%s bytes=%d\n", from, size)
	}
	return nil
}

// waitDone waits until n other peers have signalled that they have every message.
func waitDone(ctx context.Context, reg ipl.Registry, n int) error {
	done := map[string]bool{}
	for len(done) < n {
		select {
		case ev, ok := <-reg.Events():
			if !ok {
				return fmt.Errorf("the registry's events ended with %d of %d peers done", len(done), n)
			}
			if ev.Type == ipl.EventSignal && ev.Name == doneSignal {
				done[ev.Member.ID] = true
			}
		case <-ctx.Done():
			return fmt.Errorf("waiting for the others to receive (%d of %d done): %w", len(done), n, ctx.Err())
		}
	}
	return nil
}
