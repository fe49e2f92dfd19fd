package hub

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// ProbeMagic starts a hub's probe of a member's advertised address: the hub dials the
// address, writes ProbeMagic and a ProbeNonceSize-byte nonce, and the member, having
// read the magic, answers with AnswerProbe. An address that echoes the nonce is
// reachable from the hub, so that others can dial it directly.
const ProbeMagic = "IBPR"

// ProbeNonceSize is the size of a probe's nonce.
const ProbeNonceSize = 16

// probeAnswerTimeout bounds AnswerProbe.
const probeAnswerTimeout = 5 * time.Second

// AnswerProbe answers a hub's probe on conn, whose first bytes, ProbeMagic, the caller
// has read: it reads exactly the nonce that follows and writes it back, within a few
// seconds. The caller closes conn afterwards.
func AnswerProbe(conn net.Conn) error {
	if err := conn.SetDeadline(time.Now().Add(probeAnswerTimeout)); err != nil {
		return fmt.Errorf("hub: answering a probe: %w", err)
	}
	var n [ProbeNonceSize]byte
	if _, err := io.ReadFull(conn, n[:]); err != nil {
		return fmt.Errorf("hub: reading a probe's nonce from %s: %w", conn.RemoteAddr(), err)
	}
	if _, err := conn.Write(n[:]); err != nil {
		return fmt.Errorf("hub: answering a probe from %s: %w", conn.RemoteAddr(), err)
	}
	return nil
}

// probe dials each address at once (bounded by the server's probe slots) and reports
// whether one answered with the right nonce.
func (s *Server) probe(addrs []string) bool {
	var ok atomic.Bool
	var wg sync.WaitGroup
	for _, a := range addrs {
		select {
		case s.probing <- struct{}{}:
		default:
			continue // too many probes in flight: this address counts as unreachable
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-s.probing }()
			if s.probeOne(a) {
				ok.Store(true)
			}
		}()
	}
	wg.Wait()
	return ok.Load()
}

func (s *Server) probeOne(addr string) bool {
	var nonce [ProbeNonceSize]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return false
	}
	deadline := time.Now().Add(s.cfg.probeTimeout)
	d := net.Dialer{Deadline: deadline}
	c, err := d.DialContext(s.ctx, "tcp", addr)
	if err != nil {
		return false
	}
	if !s.track(c) {
		_ = c.Close()
		return false
	}
	defer s.forget(c)
	_ = c.SetDeadline(deadline)
	if _, err := c.Write(append([]byte(ProbeMagic), nonce[:]...)); err != nil {
		return false
	}
	var echo [ProbeNonceSize]byte
	if _, err := io.ReadFull(c, echo[:]); err != nil {
		return false
	}
	return bytes.Equal(echo[:], nonce[:])
}
