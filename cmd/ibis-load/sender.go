package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// send is a sender process's part: it connects -ports send ports to the receiver, sends
// -messages data messages on each (one goroutine per port), then, once all are sent,
// an end message on each carrying the count and this process's peak RSS.
func send(ctx context.Context, s *settings, ib ipl.Ibis, receiver ipl.IbisIdentifier, rank int32, stderr io.Writer) (err error) {
	ports := make([]ipl.SendPort, 0, s.ports)
	defer func() {
		for _, sp := range ports {
			err = errors.Join(err, sp.Close())
		}
	}()
	for j := range s.ports {
		sp, err := ib.CreateSendPort(loadType, "load-"+strconv.Itoa(j))
		if err != nil {
			return err
		}
		ports = append(ports, sp)
		if err := sp.Connect(ctx, receiver, loadPort); err != nil {
			return fmt.Errorf("port %d: connecting to %s: %w", j, receiver, err)
		}
	}
	me := int32(ib.Identifier().Number())
	start := time.Now()
	sent := make([]int64, len(ports))
	errs := make([]error, len(ports))
	var wg sync.WaitGroup
	for j, sp := range ports {
		wg.Go(func() {
			sent[j], errs[j] = sendData(ctx, sp, streamKey{me, int32(j)}, s)
			if errs[j] != nil {
				errs[j] = fmt.Errorf("port %d, message %d: %w", j, sent[j], errs[j])
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	elapsed := time.Since(start)
	peak := peakRSS()
	for j, sp := range ports {
		if err := sendEnd(ctx, sp, streamKey{me, int32(j)}, endInfo{sent: sent[j], rank: rank, peakRSS: peak}); err != nil {
			return fmt.Errorf("port %d: end message: %w", j, err)
		}
	}
	fmt.Fprintf(stderr, "ibis-load: sender rank %d: sent %d messages on %d ports in %.2fs, peak RSS %s\n",
		rank, s.messages*int64(s.ports), s.ports, elapsed.Seconds(), mib(peak))
	return nil
}

// sendData sends the data messages of one send port and returns how many went.
func sendData(ctx context.Context, sp ipl.SendPort, k streamKey, s *settings) (int64, error) {
	buf := make([]int64, s.values)
	for seq := range s.messages {
		w, err := sp.NewMessage(ctx)
		if err != nil {
			return seq, err
		}
		err = writeData(w, k, seq, buf, s.oneByOne)
		if _, ferr := w.Finish(); err == nil {
			err = ferr
		}
		if err != nil {
			return seq, err
		}
	}
	return s.messages, nil
}

// sendEnd sends a send port's end message.
func sendEnd(ctx context.Context, sp ipl.SendPort, k streamKey, e endInfo) error {
	w, err := sp.NewMessage(ctx)
	if err != nil {
		return err
	}
	err = writeEnd(w, k, e)
	if _, ferr := w.Finish(); err == nil {
		err = ferr
	}
	return err
}
