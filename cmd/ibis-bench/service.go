package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/cluster"
	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/payload"
	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/rawnet"
	"github.com/ibisgo/ibis/ipl"
)

// maxCached bounds the payloads a peer keeps for reuse.
const maxCached = 16

// peerService is what a peer process runs: it answers the coordinator's requests
// until told to quit or until the coordinator leaves.
type peerService struct {
	g    *cluster.Group
	e    *env
	in   ipl.ReceivePort
	out  ipl.SendPort
	data map[payload.Spec]*payload.Data
	raw  *rawnet.Server
}

// runPeer serves the coordinator until the run ends. Its result is the peer
// process's: nil when the run ended normally (including the coordinator leaving).
func runPeer(g *cluster.Group, e *env) error {
	s := &peerService{g: g, e: e, data: map[payload.Spec]*payload.Data{}}
	defer s.close()
	return g.PeerDone(s.serve(g.Ctx))
}

func (s *peerService) close() {
	if s.raw != nil {
		_ = s.raw.Close()
	}
}

func (s *peerService) serve(ctx context.Context) error {
	var err error
	if s.in, err = s.g.Ibis.CreateReceivePort(ctx, benchType, portPeerIn); err != nil {
		return err
	}
	// The connect experiment connects to this port again and again.
	if _, err = s.g.Ibis.CreateReceivePort(ctx, targetType, portTarget); err != nil {
		return err
	}
	if s.out, err = s.g.Ibis.CreateSendPort(benchType, portPeerOut); err != nil {
		return err
	}
	if err := s.out.Connect(ctx, s.g.Coordinator, portBack+"-"+strconv.Itoa(s.g.Index)); err != nil {
		return fmt.Errorf("connecting to the coordinator: %w", err)
	}
	for {
		m, err := s.in.Receive(ctx)
		if err != nil {
			return err
		}
		b, err := m.ReadByte()
		if err != nil {
			_, _ = m.Finish()
			return fmt.Errorf("reading a request: %w", err)
		}
		o := op(b)
		if o == opQuit {
			_, err := m.Finish()
			return err
		}
		h := s.handler(o)
		if h == nil {
			_, _ = m.Finish()
			return fmt.Errorf("unknown request %d from the coordinator", b)
		}
		if err := h(ctx, s, m); err != nil {
			return fmt.Errorf("request %d: %w", b, err)
		}
	}
}

func (s *peerService) handler(o op) opHandler {
	switch o {
	case opPing:
		return handlePing
	case opEcho:
		return handleEcho
	case opSink:
		return handleSink
	case opRaw:
		return handleRaw
	}
	return opHandlers[o]
}

// answer sends one answer message written by fill (nil for an empty one).
func (s *peerService) answer(ctx context.Context, fill func(w ipl.WriteMessage) error) error {
	w, err := s.out.NewMessage(ctx)
	if err != nil {
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

// payloadFor returns the peer's buffer for spec, allocated on first use.
func (s *peerService) payloadFor(spec payload.Spec) (*payload.Data, error) {
	if d := s.data[spec]; d != nil {
		return d, nil
	}
	if len(s.data) >= maxCached {
		clear(s.data)
	}
	d, err := payload.New(spec)
	if err != nil {
		return nil, err
	}
	s.data[spec] = d
	return d, nil
}

func handlePing(ctx context.Context, s *peerService, m ipl.ReadMessage) error {
	if _, err := m.Finish(); err != nil {
		return err
	}
	return s.answer(ctx, nil)
}

func handleEcho(ctx context.Context, s *peerService, m ipl.ReadMessage) error {
	d, err := readPayload(s, m)
	if err != nil {
		return err
	}
	return s.answer(ctx, d.Write)
}

func handleSink(ctx context.Context, s *peerService, m ipl.ReadMessage) error {
	ack, err := m.ReadBool()
	if err != nil {
		_, _ = m.Finish()
		return err
	}
	if _, err := readPayload(s, m); err != nil {
		return err
	}
	if !ack {
		return nil
	}
	return s.answer(ctx, nil)
}

// readPayload reads a spec and its payload and finishes the message.
func readPayload(s *peerService, m ipl.ReadMessage) (*payload.Data, error) {
	spec, err := readSpec(m)
	if err == nil {
		var d *payload.Data
		if d, err = s.payloadFor(spec); err == nil {
			if err = d.Read(m); err == nil {
				_, err = m.Finish()
				return d, err
			}
		}
	}
	_, _ = m.Finish()
	return nil, err
}

func handleRaw(ctx context.Context, s *peerService, m ipl.ReadMessage) error {
	if _, err := m.Finish(); err != nil {
		return err
	}
	if s.raw == nil {
		srv, err := rawnet.Listen(rawListenAddr(s.g))
		if err != nil {
			return err
		}
		s.raw = srv
	}
	return s.answer(ctx, func(w ipl.WriteMessage) error { return w.WriteString(s.raw.Addr()) })
}

// rawListenAddr listens for the raw baseline on the host this member's Ibis
// listens on, so that the baseline crosses the same network.
func rawListenAddr(g *cluster.Group) string {
	return hostOf(g.Ibis.Identifier().Address) + ":0"
}

// errNotAnswer: the peer answered with something else than asked.
var errNotAnswer = errors.New("unexpected answer from the peer")

// hostOf returns the host part of an implementation address of the form
// host:port (the first of a published list, docs/CLUSTERS.md), or 127.0.0.1 for an
// address of another form.
func hostOf(addr string) string {
	first, _, _ := strings.Cut(addr, ",")
	host, _, err := net.SplitHostPort(first)
	if err != nil || host == "" {
		return "127.0.0.1"
	}
	return host
}
