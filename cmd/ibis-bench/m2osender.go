package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// handleManyToOne runs a sender process of the many-to-one experiment. It opens its
// share of the connections (one send port each, all in one Ibis instance of the
// experiment's sub-pool), sends a hello on each and answers; then it serves the
// coordinator's commands (the traffic, then close) from its requests port until
// closed. Each answer ends with "" or what went wrong.
func handleManyToOne(ctx context.Context, s *peerService, m ipl.ReadMessage) error {
	var a m2oArgs
	err := m.ReadObject(&a)
	if _, ferr := m.Finish(); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	if a.Conns < 1 || a.Conns > maxM2OConns || a.First < 0 || a.First+a.Conns > maxM2OConns || a.MsgSize < 0 || a.MsgSize > 1<<20 || a.Size < 2 {
		return fmt.Errorf("%w: bad sender arguments %+v", errNotAnswer, a)
	}
	snd := &m2oSender{args: a, payload: make([]byte, a.MsgSize)}
	defer snd.close()
	if err := s.answer(ctx, func(w ipl.WriteMessage) error { return w.WriteString(errText(snd.open(ctx, s.e))) }); err != nil {
		return err
	}
	for {
		cmd, d, err := readM2OCommand(ctx, s.in)
		if err != nil {
			return err
		}
		switch cmd {
		case m2oCmdGo:
			n, err := snd.traffic(ctx, d)
			if err := s.answer(ctx, func(w ipl.WriteMessage) error {
				if err := w.WriteInt64(n); err != nil {
					return err
				}
				return w.WriteString(errText(err))
			}); err != nil {
				return err
			}
		case 0: // the run is over without a close (the coordinator gave up)
			return snd.close()
		case m2oCmdClose:
			err := snd.close()
			return s.answer(ctx, func(w ipl.WriteMessage) error { return w.WriteString(errText(err)) })
		default:
			return fmt.Errorf("%w: many-to-one command %d", errNotAnswer, cmd)
		}
	}
}

// readM2OCommand reads the coordinator's next command to a sender process: command 0
// when the coordinator ends the run instead.
func readM2OCommand(ctx context.Context, in ipl.ReceivePort) (byte, time.Duration, error) {
	m, err := in.Receive(ctx)
	if err != nil {
		return 0, 0, err
	}
	o, err := m.ReadByte()
	var cmd byte
	var d int64
	if err == nil && op(o) == opQuit {
		_, err = m.Finish()
		return 0, 0, err
	}
	if err == nil && op(o) != opManyToOne {
		err = fmt.Errorf("%w: request %d while sending many-to-one", errNotAnswer, o)
	}
	if err == nil {
		cmd, err = m.ReadByte()
	}
	if err == nil && cmd == m2oCmdGo {
		d, err = m.ReadInt64()
		if err == nil && (d <= 0 || d > int64(time.Hour)) {
			err = fmt.Errorf("%w: sending time %v", errNotAnswer, time.Duration(d))
		}
	}
	if _, ferr := m.Finish(); err == nil {
		err = ferr
	}
	return cmd, time.Duration(d), err
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// m2oSender is one sender process's connections.
type m2oSender struct {
	args    m2oArgs
	payload []byte
	ib      ipl.Ibis
	ports   []ipl.SendPort
	closed  bool
}

// open creates the instance and the send ports, connects each to the receiver and
// sends a hello on each.
func (snd *m2oSender) open(ctx context.Context, e *env) error {
	if _, err := raiseFileLimit(uint64(snd.args.Conns + fdSlack)); err != nil {
		return err
	}
	a := snd.args
	opts := []ipl.Option{ipl.WithRegistry(a.Registry), ipl.WithPool(a.Pool), ipl.WithPoolSize(a.Size),
		ipl.WithPortTypes(m2oType), ipl.WithTag("senders-" + strconv.Itoa(a.First)), ipl.WithLogger(e.Log)}
	ib, err := ipl.New(ctx, append(opts, implOptions(e)...)...)
	if err != nil {
		return fmt.Errorf("sender instance: %w", err)
	}
	snd.ib = ib
	var target ipl.ReceivePortIdentifier
	for j := range a.Conns {
		sp, err := ib.CreateSendPort(m2oType, "m2o-"+strconv.Itoa(a.First+j))
		if err != nil {
			return err
		}
		snd.ports = append(snd.ports, sp)
		if j == 0 {
			err = sp.ConnectGlobal(ctx, m2oPort)
			if err == nil {
				if to := sp.ConnectedTo(); len(to) == 1 {
					target = to[0]
				} else {
					err = fmt.Errorf("connected to %d receive ports", len(to))
				}
			}
		} else {
			err = sp.Connect(ctx, target.Ibis, target.Name)
		}
		if err != nil {
			return fmt.Errorf("connection %d: %w", a.First+j, err)
		}
		if err := snd.send(ctx, j, m2oHello); err != nil {
			return fmt.Errorf("connection %d: hello: %w", a.First+j, err)
		}
	}
	return nil
}

// send sends one message of kind on connection j.
func (snd *m2oSender) send(ctx context.Context, j int, kind byte) error {
	w, err := snd.ports[j].NewMessage(ctx)
	if err != nil {
		return err
	}
	err = w.WriteByte(kind)
	if err == nil {
		err = w.WriteInt32(int32(snd.args.First + j))
	}
	if err == nil && kind == m2oData {
		err = w.WriteArray(snd.payload)
	}
	if _, ferr := w.Finish(); err == nil {
		err = ferr
	}
	return err
}

// traffic sends data messages on every connection, one goroutine per connection,
// for d, then an end message on each; it returns the data messages sent.
func (snd *m2oSender) traffic(ctx context.Context, d time.Duration) (int64, error) {
	var sent atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, len(snd.ports))
	until := time.Now().Add(d)
	for j := range snd.ports {
		wg.Go(func() {
			var n int64
			for time.Now().Before(until) {
				if err := snd.send(ctx, j, m2oData); err != nil {
					errs[j] = fmt.Errorf("connection %d: %w", snd.args.First+j, err)
					break
				}
				n++
			}
			sent.Add(n)
			if errs[j] == nil {
				errs[j] = snd.send(ctx, j, m2oEnd)
			}
		})
	}
	wg.Wait()
	return sent.Load(), errors.Join(errs...)
}

// close closes the ports and the instance (once).
func (snd *m2oSender) close() error {
	if snd.closed {
		return nil
	}
	snd.closed = true
	var errs []error
	for _, sp := range snd.ports {
		errs = append(errs, sp.Close())
	}
	if snd.ib != nil {
		errs = append(errs, snd.ib.Close())
	}
	return errors.Join(errs...)
}
