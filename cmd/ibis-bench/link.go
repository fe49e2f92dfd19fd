package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/cluster"
	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/payload"
	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/rawnet"
	"github.com/ibisgo/ibis/ipl"
)

// link is the coordinator's end of the request/answer channel to one peer.
type link struct {
	peer ipl.IbisIdentifier
	out  ipl.SendPort
	in   ipl.ReceivePort
	data map[payload.Spec]*payload.Data
}

// openLinks connects the coordinator to the first n peers (all when n < 0).
func openLinks(ctx context.Context, g *cluster.Group, n int) ([]*link, error) {
	if n < 0 || n > len(g.Peers) {
		n = len(g.Peers)
	}
	links := make([]*link, n)
	for i := range links {
		l := &link{peer: g.Peers[i], data: map[payload.Spec]*payload.Data{}}
		var err error
		if l.in, err = g.Ibis.CreateReceivePort(ctx, benchType, portBack+"-"+strconv.Itoa(i)); err != nil {
			return nil, err
		}
		if l.out, err = g.Ibis.CreateSendPort(benchType, "bench-to-"+strconv.Itoa(i)); err != nil {
			return nil, err
		}
		if err := l.out.Connect(ctx, l.peer, portPeerIn); err != nil {
			return nil, fmt.Errorf("connecting to peer %d: %w", i, err)
		}
		links[i] = l
	}
	return links, nil
}

// closeLinks tells the peers the run is over. Errors are ignored: a peer that is
// gone needs no telling, and the coordinator leaving ends the others anyway.
func closeLinks(ctx context.Context, links []*link) {
	for _, l := range links {
		if w, err := l.out.NewMessage(ctx); err == nil {
			_ = w.WriteByte(byte(opQuit))
			_, _ = w.Finish()
		}
		_ = l.out.Close()
		_ = l.in.Close()
	}
}

// request sends one request: the op, then what fill writes.
func (l *link) request(ctx context.Context, o op, fill func(w ipl.WriteMessage) error) error {
	w, err := l.out.NewMessage(ctx)
	if err != nil {
		return err
	}
	if err := w.WriteByte(byte(o)); err != nil {
		_, _ = w.Finish()
		return err
	}
	if fill != nil {
		if err := fill(w); err != nil {
			_, _ = w.Finish()
			return err
		}
	}
	_, err = w.Finish()
	return err
}

// await receives one answer, reads it with read (nil to skip) and finishes it.
func (l *link) await(ctx context.Context, read func(m ipl.ReadMessage) error) error {
	m, err := l.in.Receive(ctx)
	if err != nil {
		return err
	}
	if read != nil {
		if err := read(m); err != nil {
			_, _ = m.Finish()
			return err
		}
	}
	_, err = m.Finish()
	return err
}

// payloadFor returns the coordinator's buffer for spec.
func (l *link) payloadFor(spec payload.Spec) (*payload.Data, error) {
	if d := l.data[spec]; d != nil {
		return d, nil
	}
	d, err := payload.New(spec)
	if err != nil {
		return nil, err
	}
	l.data[spec] = d
	return d, nil
}

// ping is one empty round trip.
func (l *link) ping(ctx context.Context) error {
	if err := l.request(ctx, opPing, nil); err != nil {
		return err
	}
	return l.await(ctx, nil)
}

// echo sends the payload of spec and reads the echo back into the same buffer.
func (l *link) echo(ctx context.Context, spec payload.Spec) error {
	d, err := l.payloadFor(spec)
	if err != nil {
		return err
	}
	if err := l.request(ctx, opEcho, func(w ipl.WriteMessage) error {
		if err := writeSpec(w, spec); err != nil {
			return err
		}
		return d.Write(w)
	}); err != nil {
		return err
	}
	return l.await(ctx, d.Read)
}

// verify does one echo of spec and checks that the payload came back intact: run
// once per payload before timing, so a benchmark never measures broken transfers.
func (l *link) verify(ctx context.Context, spec payload.Spec) error {
	if err := l.echo(ctx, spec); err != nil {
		return err
	}
	return l.data[spec].Check()
}

// sink sends count payloads of spec, the last one asking for an acknowledgement,
// and waits for it. It returns the bytes of one message as the sender counted
// them (Finish's count, headers included).
func (l *link) sink(ctx context.Context, spec payload.Spec, count int) (int64, error) {
	d, err := l.payloadFor(spec)
	if err != nil {
		return 0, err
	}
	var size int64
	for i := range count {
		w, err := l.out.NewMessage(ctx)
		if err != nil {
			return 0, err
		}
		ack := i == count-1
		err = w.WriteByte(byte(opSink))
		if err == nil {
			err = w.WriteBool(ack)
		}
		if err == nil {
			err = writeSpec(w, spec)
		}
		if err == nil {
			err = d.Write(w)
		}
		n, ferr := w.Finish()
		if err != nil {
			return 0, err
		}
		if ferr != nil {
			return 0, ferr
		}
		size = n
	}
	return size, l.await(ctx, nil)
}

// dialRaw connects to the peer's raw-socket server, the baseline every network
// experiment measures in the same run.
func (l *link) dialRaw(ctx context.Context) (*rawnet.Conn, error) {
	addr, err := l.rawAddr(ctx)
	if err != nil {
		return nil, fmt.Errorf("raw baseline: %w", err)
	}
	return rawnet.Dial(addr)
}

// rawAddr asks the peer for its raw-socket server's address.
func (l *link) rawAddr(ctx context.Context) (string, error) {
	if err := l.request(ctx, opRaw, nil); err != nil {
		return "", err
	}
	var addr string
	err := l.await(ctx, func(m ipl.ReadMessage) error {
		var err error
		addr, err = m.ReadString()
		return err
	})
	if err == nil && addr == "" {
		err = fmt.Errorf("%w: empty raw address", errNotAnswer)
	}
	return addr, err
}
