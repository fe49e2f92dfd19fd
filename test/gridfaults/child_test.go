package gridfaults_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

// The children's parts. Each runs on a host of the grid, reports on its standard output
// in lines the parent reads, and exits 1 with the reason on standard error when what it
// saw breaks a rule it can check itself (a message lost, duplicated, reordered or
// damaged).

const (
	envRole        = "GRIDFAULTS_ROLE"   // registry, receiver, sender or stranger
	envListen      = "GRIDFAULTS_LISTEN" // the registry's host:port to listen on
	envHB          = "GRIDFAULTS_HEARTBEAT"
	envDeath       = "GRIDFAULTS_DEATH"
	envMsgs        = "GRIDFAULTS_MSGS"         // messages per epoch (0: until "stop" or a failure)
	envSize        = "GRIDFAULTS_SIZE"         // payload bytes per message
	envRetry       = "GRIDFAULTS_RETRY"        // messages of a second epoch after a failed first (0: none)
	envConnectWait = "GRIDFAULTS_CONNECT_WAIT" // bounds a Connect of the sender (connectWait)

	childBound  = 150 * time.Second // ends a hung child; no case relies on it
	progressGap = 100               // the receiver reports every this many messages
	endOfEpoch  = -1                // the sequence number of an epoch's last message
	connectWait = 60 * time.Second  // bounds one Connect of the sender by default
)

// streamType: one sender at a time into the receiver's port, lost connections reported
// through a handler.
var streamType = ipl.MustPortType(ipl.ConnectionManyToOne, ipl.SerializationData, ipl.ReceiveExplicit,
	ipl.CommunicationReliable, ipl.CommunicationFIFO, ipl.ConnectionUpcalls, ipl.ConnectionDowncalls)

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
	case "stranger":
		err = runStranger(ctx)
	default:
		err = fmt.Errorf("unknown role %q", role)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", role, err)
		return 1
	}
	return 0
}

// envInt reads an integer from the environment (def when unset).
func envInt(name string, def int) int {
	v, err := strconv.Atoi(os.Getenv(name))
	if err != nil {
		return def
	}
	return v
}

// stdinLines delivers the lines of standard input; closed at its end.
func stdinLines() <-chan string {
	ch := make(chan string, 16)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}

// runRegistry serves the pool until SIGTERM, printing "addr A" and then the event log
// (joins, leaves, deaths).
func runRegistry(ctx context.Context) error {
	var opts []registry.ServerOption
	if v := os.Getenv(envHB); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return err
		}
		opts = append(opts, registry.WithHeartbeatInterval(d))
	}
	if v := os.Getenv(envDeath); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return err
		}
		opts = append(opts, registry.WithDeathTimeout(d))
	}
	if s := os.Getenv(ipl.EnvPoolSecret); s != "" {
		opts = append(opts, registry.WithServerSecret([]byte(s)))
	}
	srv, err := registry.StartEmbedded(os.Getenv(envListen), append(opts, registry.WithEventLog(os.Stdout))...)
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

// newIbis joins the pool the environment names; deaths it hears of are printed.
func newIbis(ctx context.Context) (ipl.Ibis, error) {
	return ipl.New(ctx, ipl.WithPortTypes(streamType),
		ipl.WithCapabilities(ipl.ElectionsStrict, ipl.MembershipTotallyOrdered),
		ipl.WithEventHandler(func(e ipl.Event) {
			if e.Type == ipl.EventDied {
				fmt.Printf("died %s\n", e.Member)
			}
		}))
}

// payload fills b with the bytes of message seq of epoch, which the receiver can check.
func payload(b []byte, epoch, seq int64) {
	r := rand.New(rand.NewPCG(uint64(epoch), uint64(seq)))
	for i := 0; i+8 <= len(b); i += 8 {
		v := r.Uint64()
		for k := range 8 {
			b[i+k] = byte(v >> (8 * k))
		}
	}
}

// lostPrinter prints "lost is=B ERR" for each connection the port lost.
type lostPrinter struct{}

func (lostPrinter) GotConnection(ipl.ReceivePort, ipl.SendPortIdentifier) bool { return true }

func (lostPrinter) LostConnection(_ ipl.ReceivePort, _ ipl.SendPortIdentifier, err error) {
	if err != nil {
		fmt.Printf("lost is=%t %v\n", errors.Is(err, ipl.ErrConnectionLost), err)
	}
}

// runReceiver takes the stream of epochs (one per send port of the sender) until "quit"
// on standard input, checking every message: epoch, sequence number and checksum. Each
// epoch's messages must arrive whole and in order from 0 (an epoch cut by a fault may
// stop early). It prints "progress E N", "end epoch=E received=N bytes=B seconds=S" at an
// epoch's last message (S from its first message), and "result epoch=E received=N" for
// every epoch when it quits.
func runReceiver(ctx context.Context) error {
	in := stdinLines()
	ib, err := newIbis(ctx)
	if err != nil {
		return err
	}
	defer ib.Close()
	rp, err := ib.CreateReceivePort(ctx, streamType, "stream", ipl.WithConnectionHandler(lostPrinter{}))
	if err != nil {
		return err
	}
	defer rp.Close()
	if _, err := ib.Registry().Elect(ctx, "receiver"); err != nil {
		return err
	}
	fmt.Println("ready")
	var (
		epoch, next int64 = -1, 0
		bytes       int64
		first       time.Time
		counts      = map[int64]int64{}
		quit        bool
		buf         []byte
		want        []byte
		idle        = 200 * time.Millisecond
	)
	for {
		if !quit {
			select {
			case l, ok := <-in:
				if !ok || l == "quit" {
					quit, idle = true, time.Second // take what is left, then stop
				}
			default:
			}
		}
		rctx, cancel := context.WithTimeout(ctx, idle)
		m, err := rp.Receive(rctx)
		cancel()
		switch {
		case errors.Is(err, ipl.ErrTimeout) && ctx.Err() == nil && quit:
			for e := int64(0); e <= epoch; e++ {
				fmt.Printf("result epoch=%d received=%d\n", e, counts[e])
			}
			return rp.Close()
		case errors.Is(err, ipl.ErrTimeout) && ctx.Err() == nil:
			continue
		case err != nil:
			return fmt.Errorf("receive in epoch %d after %d messages: %w", epoch, next, err)
		}
		e, rerr := m.ReadInt64()
		seq, serr := m.ReadInt64()
		n, nerr := m.ReadInt64()
		sum, cerr := m.ReadInt64()
		if err := errors.Join(rerr, serr, nerr, cerr); err != nil {
			_, _ = m.Finish()
			if errors.Is(err, ipl.ErrConnectionLost) {
				continue // a message the loss interrupted is thrown away whole
			}
			return fmt.Errorf("epoch %d, message %d: %w", epoch, next, err)
		}
		if n < 0 || n > 1<<24 {
			return fmt.Errorf("epoch %d, message %d: payload of %d bytes", e, seq, n)
		}
		if int64(cap(buf)) < n {
			buf, want = make([]byte, n), make([]byte, n)
		}
		buf = buf[:n]
		perr := m.ReadArray(buf)
		if _, ferr := m.Finish(); errors.Join(perr, ferr) != nil {
			if errors.Is(errors.Join(perr, ferr), ipl.ErrConnectionLost) {
				continue
			}
			return fmt.Errorf("epoch %d, message %d: %w", e, seq, errors.Join(perr, ferr))
		}
		if e != epoch {
			if e < epoch || seq != 0 {
				return fmt.Errorf("message %d of epoch %d after %d messages of epoch %d: want message 0 of a later epoch", seq, e, next, epoch)
			}
			epoch, next, bytes, first = e, 0, 0, time.Now()
		}
		if seq == endOfEpoch {
			fmt.Printf("end epoch=%d received=%d bytes=%d seconds=%.3f\n", e, next, bytes, time.Since(first).Seconds())
			continue
		}
		if seq != next {
			return fmt.Errorf("epoch %d: message %d where %d was due (lost, duplicated or reordered)", e, seq, next)
		}
		payload(want[:n], e, seq)
		if int64(crc32.ChecksumIEEE(buf)) != sum || string(buf) != string(want[:n]) {
			return fmt.Errorf("epoch %d, message %d: damaged (checksum or bytes differ)", e, seq)
		}
		next++
		bytes += n
		counts[e] = next
		if next%progressGap == 0 {
			fmt.Printf("progress %d %d\n", e, next)
		}
	}
}

// runSender streams epochs of numbered, checksummed messages to the receiver: epoch 0
// until envMsgs messages are sent, "stop" arrives on standard input or a send fails;
// after a failure, when envRetry is set, epoch 1 on a new send port with envRetry
// messages. It prints "connected epoch=E relayed=R reversed=V", "done epoch=E handed=H"
// or "failed epoch=E handed=H is=B ERR" (H: messages whose Finish returned nil; is:
// whether the error matches ipl.ErrConnectionLost) and "connect-failed epoch=E ERR".
func runSender(ctx context.Context) error {
	var stop atomic.Bool
	in := stdinLines()
	go func() {
		for l := range in {
			if l == "stop" {
				stop.Store(true)
			}
		}
	}()
	ib, err := newIbis(ctx)
	if err != nil {
		return err
	}
	defer ib.Close()
	recv, err := ib.Registry().ElectionResult(ctx, "receiver")
	if err != nil {
		return err
	}
	size := envInt(envSize, 16<<10)
	msgs := envInt(envMsgs, 0)
	for epoch := int64(0); epoch < 2; epoch++ {
		failed, err := sendEpoch(ctx, ib, recv, epoch, size, msgs, &stop)
		if err != nil || !failed {
			return err
		}
		if msgs = envInt(envRetry, 0); msgs == 0 {
			return nil
		}
	}
	return nil
}

// sendEpoch sends one epoch on a new send port; failed says that a send failed (printed).
func sendEpoch(ctx context.Context, ib ipl.Ibis, recv ipl.IbisIdentifier, epoch int64, size, msgs int, stop *atomic.Bool) (failed bool, err error) {
	sp, err := ib.CreateSendPort(streamType, "stream-"+strconv.FormatInt(epoch, 10))
	if err != nil {
		return false, err
	}
	defer sp.Close()
	wait := connectWait
	if d, err := time.ParseDuration(os.Getenv(envConnectWait)); err == nil {
		wait = d
	}
	cctx, cancel := context.WithTimeout(ctx, wait)
	err = sp.Connect(cctx, recv, "stream")
	cancel()
	if err != nil {
		fmt.Printf("connect-failed epoch=%d %q\n", epoch, err.Error())
		return false, nil
	}
	st := sp.Stats()
	fmt.Printf("connected epoch=%d relayed=%d reversed=%d\n", epoch, st.ConnectionsRelayed, st.ConnectionsReversed)
	buf := make([]byte, size)
	send := func(seq int64) error {
		m, err := sp.NewMessage(ctx)
		if err != nil {
			return err
		}
		n := int64(len(buf))
		if seq == endOfEpoch {
			n = 0
		} else {
			payload(buf, epoch, seq)
		}
		werr := errors.Join(m.WriteInt64(epoch), m.WriteInt64(seq), m.WriteInt64(n),
			m.WriteInt64(int64(crc32.ChecksumIEEE(buf[:n]))), m.WriteArray(buf[:n]))
		_, ferr := m.Finish()
		return errors.Join(werr, ferr)
	}
	var handed int64
	for (msgs == 0 || handed < int64(msgs)) && !stop.Load() {
		if err := send(handed); err != nil {
			fmt.Printf("failed epoch=%d handed=%d is=%t %q\n", epoch, handed, errors.Is(err, ipl.ErrConnectionLost), err.Error())
			return true, nil
		}
		handed++
	}
	if err := errors.Join(send(endOfEpoch), sp.Close()); err != nil {
		fmt.Printf("failed epoch=%d handed=%d is=%t %q\n", epoch, handed, errors.Is(err, ipl.ErrConnectionLost), err.Error())
		return true, nil
	}
	fmt.Printf("done epoch=%d handed=%d\n", epoch, handed)
	return false, nil
}
