package registry

import (
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"github.com/ibisgo/ibis/internal/poolauth"
)

// Connections that have not joined a pool yet are limited in all
// (WithMaxUnjoinedConnections) and per source address
// (WithMaxUnjoinedPerSource), so that idle connections from one address
// cannot keep the members of another out. A connection beyond a limit is
// told why in the pool check's refusal (busyReason marks it, so that the
// client reports ErrTooManyRequests rather than a failed check), by at most
// maxRefusing goroutines at once, each for at most refuseWait; beyond
// those, it is closed at once.

// busyReason begins the refusal reason of a connection beyond a limit.
const busyReason = "server busy: "

const (
	maxRefusing = 64
	refuseWait  = time.Second
)

// unjoinedLimit returns why one more unjoined connection from source is
// refused, or "" when it is not. Called with s.mu held.
func (s *Server) unjoinedLimit(source string) string {
	switch {
	case s.unjoined >= s.cfg.maxUnjoined:
		return fmt.Sprintf("%d connections have not joined a pool yet, the server's limit", s.unjoined)
	case s.unjoinedBy[source] >= s.cfg.maxUnjoinedPerSource:
		return fmt.Sprintf("address %s has %d connections that have not joined a pool yet, the server's limit per source address",
			source, s.unjoinedBy[source])
	}
	return ""
}

// unjoinedGone counts off a connection from source that joined or ended
// without joining. Called with s.mu held.
func (s *Server) unjoinedGone(source string) {
	s.unjoined--
	if s.unjoinedBy[source]--; s.unjoinedBy[source] <= 0 {
		delete(s.unjoinedBy, source)
	}
}

// refuseBusy tells a client beyond a limit why it is refused, in the pool
// check (after TLS, if the server speaks it), then closes the connection.
func (c *serverConn) refuseBusy(reason string) {
	s := c.s
	defer func() {
		s.mu.Lock()
		s.refusing--
		s.mu.Unlock()
		s.wg.Done()
	}()
	defer func() { _ = closeConn(c.conn) }()
	s.refused.Add(1)
	deadline := time.Now().Add(refuseWait)
	if err := c.conn.SetDeadline(deadline); err != nil {
		return
	}
	if tc, ok := c.conn.(*tls.Conn); ok {
		if err := tc.Handshake(); err != nil {
			return
		}
	}
	if _, err := poolauth.Refuse(c.conn, busyReason+reason); err == nil {
		lingerClose(netConnOf(c.conn), deadline)
	}
}

// netConnOf returns the TCP connection under conn.
func netConnOf(conn net.Conn) net.Conn {
	if tc, ok := conn.(*tls.Conn); ok {
		return tc.NetConn()
	}
	return conn
}
