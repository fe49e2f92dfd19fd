package hub

import (
	"fmt"
	"net"
	"sync"
	"time"

	"go.uber.org/zap"
)

// memberConn is a registered member's control connection.
type memberConn struct {
	id   memberID
	conn net.Conn
	gone chan struct{} // closed when the control connection has ended

	wmu          sync.Mutex
	writeTimeout time.Duration
}

// send writes one frame to the member, within writeTimeout; a failed write ends the
// control connection.
func (m *memberConn) send(typ byte, payload []byte) error {
	m.wmu.Lock()
	defer m.wmu.Unlock()
	_ = m.conn.SetWriteDeadline(time.Now().Add(m.writeTimeout))
	if err := writeFrame(m.conn, typ, payload); err != nil {
		_ = m.conn.Close()
		return err
	}
	return nil
}

// serveMember serves a control connection: it probes the member's addresses, answers
// the registration, then keeps the connection alive until either side ends it.
func (s *Server) serveMember(c net.Conn, pool string, payload []byte) {
	reg, err := decodeRegister(payload)
	if err != nil {
		s.answer(c, codeProtocol, err.Error())
		return
	}
	id := memberID{pool, reg.key}
	s.mu.Lock()
	full := len(s.members) >= s.cfg.maxMembers && s.members[id] == nil
	s.mu.Unlock()
	if full {
		s.stats.refused.Add(1)
		s.answer(c, codeRefused, fmt.Sprintf("the hub holds its limit of %d members", s.cfg.maxMembers))
		return
	}
	reachable := s.probe(reg.advertise)
	interval := max(s.cfg.keepalive, reg.interval)
	m := &memberConn{id: id, conn: c, gone: make(chan struct{}), writeTimeout: keepaliveMisses * interval}
	defer close(m.gone)

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	old := s.members[id]
	if old == nil && len(s.members) >= s.cfg.maxMembers {
		s.mu.Unlock()
		s.stats.refused.Add(1)
		s.answer(c, codeRefused, fmt.Sprintf("the hub holds its limit of %d members", s.cfg.maxMembers))
		return
	}
	s.members[id] = m
	s.mu.Unlock()
	if old != nil {
		// The same member again (its old connection died unnoticed): the new one wins.
		_ = old.conn.Close()
	}
	defer func() {
		s.mu.Lock()
		if s.members[id] == m {
			delete(s.members, id)
		}
		s.mu.Unlock()
	}()
	observed := c.RemoteAddr().String()
	ans := registeredMsg{reachable: reachable, interval: s.cfg.keepalive, observed: observed}
	if err := m.send(frameRegistered, ans.encode()); err != nil {
		return
	}
	s.log.Debug("member registered", zap.String("pool", pool), zap.String("observed", observed),
		zap.Strings("advertised", reg.advertise), zap.Bool("reachable", reachable))

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(s.cfg.keepalive)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				if m.send(framePing, nil) != nil {
					return
				}
			case <-stop:
				return
			}
		}
	}()
	deadAfter := keepaliveMisses * interval
	for {
		_ = c.SetReadDeadline(time.Now().Add(deadAfter))
		f, err := readFrame(c)
		if err != nil {
			s.log.Debug("member gone", zap.String("pool", pool), zap.String("observed", observed), zap.Error(err))
			break
		}
		if f.typ != framePing || len(f.payload) != 0 {
			s.log.Debug("member sent an unexpected frame", zap.String("pool", pool), zap.Uint8("type", f.typ))
			break
		}
	}
	_ = c.Close()
	close(stop)
	wg.Wait()
}
