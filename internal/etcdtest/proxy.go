package etcdtest

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"
)

// proxyDialTimeout bounds the proxy's connection to its target.
const proxyDialTimeout = 5 * time.Second

// linkState is what a Proxy does with its traffic.
type linkState int

const (
	linkOpen  linkState = iota // forward everything
	linkCut                    // forward nothing, close nothing: a partition
	linkReset                  // close every connection and refuse new ones
)

// Proxy forwards TCP connections from a port on 127.0.0.1 to a target address and
// can break that link the two ways a network breaks: Cut, a partition (packets are
// dropped: connections stay open and hang), and Reset (connections are closed and
// new ones refused). Heal restores it. A test points a client at Addr instead of the
// target, e.g. one Proxy per etcd node to partition a registry front end from etcd.
// The proxy is closed at t.Cleanup.
type Proxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	state  linkState
	healed chan struct{} // closed when the link is open; replaced by Cut and Reset
	links  map[*link]struct{}
	closed bool

	wg sync.WaitGroup
}

// link is one forwarded connection: the client's and the proxy's to the target.
type link struct {
	done chan struct{} // closed by close

	mu             sync.Mutex
	client, server net.Conn
	closed         bool
}

// attach sets the connection to the target; it returns false if l was closed
// meanwhile, and the caller closes server.
func (l *link) attach(server net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.server = server
	return true
}

// close ends both connections. With reset, the client gets a TCP RST, as from a
// peer that lost the connection's state, rather than an orderly FIN.
func (l *link) close(reset bool) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	conns := []net.Conn{l.client, l.server}
	l.mu.Unlock()
	close(l.done)
	for _, c := range conns {
		if c == nil {
			continue
		}
		if tc, ok := c.(*net.TCPConn); ok && reset {
			_ = tc.SetLinger(0)
		}
		_ = c.Close()
	}
}

// NewProxy listens on a port of 127.0.0.1 that the kernel picks and forwards every
// connection to target ("host:port").
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("etcdtest: proxy listen: %v", err)
	}
	healed := make(chan struct{})
	close(healed)
	p := &Proxy{ln: ln, target: target, healed: healed, links: make(map[*link]struct{})}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// NewProxies starts one Proxy per endpoint and returns them with their addresses,
// in the order of endpoints.
func NewProxies(t testing.TB, endpoints []string) ([]*Proxy, []string) {
	t.Helper()
	ps := make([]*Proxy, len(endpoints))
	addrs := make([]string, len(endpoints))
	for i, ep := range endpoints {
		ps[i] = NewProxy(t, ep)
		addrs[i] = ps[i].Addr()
	}
	return ps, addrs
}

// Addr returns the address clients connect to ("127.0.0.1:port").
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Cut partitions the link: nothing is forwarded in either direction any more, and
// new connections are accepted but held, as when packets are dropped. Nothing is
// closed, so the client side sees requests hang until its own timeouts.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state == linkOpen {
		p.healed = make(chan struct{})
	}
	p.state = linkCut
}

// Reset closes every connection with a TCP reset and refuses new ones (they are
// reset at once) until Heal, as when the target's host is down.
func (p *Proxy) Reset() {
	p.mu.Lock()
	if p.state == linkOpen {
		p.healed = make(chan struct{})
	}
	p.state = linkReset
	links := p.takeLinks()
	p.mu.Unlock()
	for _, l := range links {
		l.close(true)
	}
}

// Heal restores the link: held data and held connections go on where they stopped
// (after Cut), and new connections are forwarded again.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state != linkOpen {
		p.state = linkOpen
		close(p.healed)
	}
}

// Close stops the proxy, closes all its connections and waits for its goroutines.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	links := p.takeLinks()
	p.mu.Unlock()
	_ = p.ln.Close()
	for _, l := range links {
		l.close(false)
	}
	p.wg.Wait()
}

// takeLinks empties the set of links and returns them. p.mu held.
func (p *Proxy) takeLinks() []*link {
	links := make([]*link, 0, len(p.links))
	for l := range p.links {
		links = append(links, l)
		delete(p.links, l)
	}
	return links
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed by Close
		}
		l := &link{client: c, done: make(chan struct{})}
		p.mu.Lock()
		if p.closed || p.state == linkReset {
			p.mu.Unlock()
			l.close(true)
			continue
		}
		p.links[l] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go p.serve(l)
	}
}

// errLinkClosed says that a link was closed while it waited for the proxy to heal.
var errLinkClosed = errors.New("etcdtest: proxied connection closed")

// pass blocks while the link is cut and returns nil once it may forward, or an
// error once l is closed.
func (p *Proxy) pass(l *link) error {
	for {
		p.mu.Lock()
		state, healed := p.state, p.healed
		p.mu.Unlock()
		if state == linkOpen {
			return nil
		}
		select {
		case <-healed:
		case <-l.done:
			return errLinkClosed
		}
	}
}

// serve connects l to the target once the link lets it through and then copies
// both ways until either side ends.
func (p *Proxy) serve(l *link) {
	defer p.wg.Done()
	defer p.forget(l)
	if p.pass(l) != nil {
		return
	}
	server, err := net.DialTimeout("tcp", p.target, proxyDialTimeout)
	if err != nil {
		// The target is down: the client sees its connection reset, as it would
		// see the refused connection if it dialled the target itself.
		l.close(true)
		return
	}
	if !l.attach(server) {
		_ = server.Close()
		return
	}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pump(l, server, l.client) }()
	go func() { defer wg.Done(); p.pump(l, l.client, server) }()
	wg.Wait()
}

// pump copies from src to dst, holding each chunk while the link is cut, and closes
// the link when either side ends.
func (p *Proxy) pump(l *link, dst, src net.Conn) {
	defer l.close(false)
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if p.pass(l) != nil {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// forget drops a finished link from the proxy's set.
func (p *Proxy) forget(l *link) {
	l.close(false)
	p.mu.Lock()
	delete(p.links, l)
	p.mu.Unlock()
}

// String describes the proxy for test logs.
func (p *Proxy) String() string { return fmt.Sprintf("proxy %s -> %s", p.Addr(), p.target) }
