package hub

import (
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/poolauth"
)

const transferSize = 4 << 20

func TestRelayBothWays(t *testing.T) {
	secret := poolauth.New([]byte("s3cret"))
	srv, addr := startHub(t, WithSecrets(secretLookup("p", secret)))
	a := register(t, addr, Registration{Pool: "p", Secret: secret, Key: "key-a"})
	b := register(t, addr, Registration{Pool: "p", Secret: secret, Key: "key-b"})
	waitFor(t, "two members", func() bool { return srv.Stats().Members == 2 })

	for _, dir := range []struct {
		from string
		to   *Member
	}{{"a", b}, {"b", a}} {
		c, err := Relay(testCtx(t), addr, RelayRequest{Pool: "p", Secret: secret, Key: dir.to.key})
		if err != nil {
			t.Fatalf("relay from %s: %v", dir.from, err)
		}
		d := accepted(t, dir.to)
		exchange(t, c, d, transferSize)
		_ = c.Close()
		_ = d.Close()
	}
	waitFor(t, "both relays ended", func() bool { return srv.Stats().Active == 0 })
	st := srv.Stats()
	if st.Relays != 2 || st.Bytes != 4*transferSize {
		t.Errorf("stats %v: want 2 relays and %d bytes", st, 4*transferSize)
	}
}

func TestRelayThroughTwoHubs(t *testing.T) {
	secret := poolauth.New([]byte("s3cret"))
	near, nearAddr := startHub(t, WithSecrets(secretLookup("p", secret)))
	far, farAddr := startHub(t, WithSecrets(secretLookup("p", secret)))
	b := register(t, farAddr, Registration{Pool: "p", Secret: secret, Key: "key-b"})

	c, err := Relay(testCtx(t), nearAddr, RelayRequest{Pool: "p", Secret: secret, Key: "key-b", TargetHub: farAddr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	exchange(t, c, accepted(t, b), transferSize)
	if n, f := near.Stats().Forwarded, far.Stats().Relays; n != 1 || f != 1 {
		t.Errorf("forwarded %d by the near hub, relayed %d by the far one; want 1 and 1", n, f)
	}
	// A key the far hub does not know: its answer comes back through the near one.
	_, err = Relay(testCtx(t), nearAddr, RelayRequest{Pool: "p", Secret: secret, Key: "nobody", TargetHub: farAddr})
	if !errors.Is(err, ErrNoSuchMember) {
		t.Errorf("relay to an unknown key through two hubs: %v, want ErrNoSuchMember", err)
	}
	// A target hub nobody listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	_ = ln.Close()
	_, err = Relay(testCtx(t), nearAddr, RelayRequest{Pool: "p", Secret: secret, Key: "key-b", TargetHub: dead})
	if !errors.Is(err, ErrUnreachable) {
		t.Errorf("relay through a dead target hub: %v, want ErrUnreachable", err)
	}
}

func TestRelayUnknownKey(t *testing.T) {
	_, addr := startHub(t)
	register(t, addr, Registration{Pool: "p", Key: "key-a"})
	_, err := Relay(testCtx(t), addr, RelayRequest{Pool: "p", Key: "key-x"})
	if !errors.Is(err, ErrNoSuchMember) {
		t.Fatalf("got %v, want ErrNoSuchMember", err)
	}
	// Keys are per pool: key-a of pool p is no member of pool q.
	_, err = Relay(testCtx(t), addr, RelayRequest{Pool: "q", Key: "key-a"})
	if !errors.Is(err, ErrNoSuchMember) {
		t.Fatalf("other pool: got %v, want ErrNoSuchMember", err)
	}
}

func TestWrongSecretRefused(t *testing.T) {
	secret := poolauth.New([]byte("right"))
	wrong := poolauth.New([]byte("wrong"))
	srv, addr := startHub(t, WithSecrets(secretLookup("p", secret)))
	register(t, addr, Registration{Pool: "p", Secret: secret, Key: "key-a"})

	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrRefused) || !errors.Is(err, poolauth.ErrUnauthenticated) {
			t.Errorf("%s: got %v, want ErrRefused and ErrUnauthenticated", what, err)
		}
	}
	_, err := Register(testCtx(t), addr, Registration{Pool: "p", Secret: wrong, Key: "key-b"})
	refused("register, wrong secret", err)
	_, err = Register(testCtx(t), addr, Registration{Pool: "p", Key: "key-b"})
	refused("register, no secret", err)
	_, err = Register(testCtx(t), addr, Registration{Pool: "other", Secret: secret, Key: "key-b"})
	refused("register, a pool not served", err)
	_, err = Relay(testCtx(t), addr, RelayRequest{Pool: "p", Secret: wrong, Key: "key-a"})
	refused("relay, wrong secret", err)

	// An accept connection with the wrong secret never reaches the relay table.
	m := &Member{hubAddr: addr, pool: "p", key: "key-a", secret: wrong, cfg: newClientConfig(nil)}
	_, _, err = open(testCtx(t), &m.cfg, addr, "p", wrong, frameAccept, acceptMsg{key: "key-a"}.encode())
	refused("accept, wrong secret", err)

	// Hub to hub: the near hub knows another secret for p than the far one.
	_, nearAddr := startHub(t, WithSecrets(secretLookup("p", wrong)))
	_, err = Relay(testCtx(t), nearAddr, RelayRequest{Pool: "p", Secret: wrong, Key: "key-a", TargetHub: addr})
	refused("hub to hub, wrong secret", err)

	if st := srv.Stats(); st.Relays != 0 || st.Members != 1 {
		t.Errorf("stats %v: want no relay and one member", st)
	}
}

func TestTargetNeverComes(t *testing.T) {
	srv, addr := startHub(t, WithRelayTimeout(100*time.Millisecond))
	rawMember(t, addr, "p", poolauth.Secret{}, "silent", time.Minute)
	_, err := Relay(testCtx(t), addr, RelayRequest{Pool: "p", Key: "silent"})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v, want ErrTimeout", err)
	}
	if st := srv.Stats(); st.Timeouts != 1 || st.Pending != 0 {
		t.Errorf("stats %v: want one timeout and nothing pending", st)
	}
}

func TestHubClosedMidTransfer(t *testing.T) {
	srv, addr := startHub(t)
	a := register(t, addr, Registration{Pool: "p", Key: "key-a"})
	b := register(t, addr, Registration{Pool: "p", Key: "key-b"})
	c, err := Relay(testCtx(t), addr, RelayRequest{Pool: "p", Key: "key-b"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d := accepted(t, b)
	exchange(t, c, d, 1<<20)

	// Both sides stream until their connection fails.
	failed := make(chan error, 2)
	var received atomic.Int64
	for _, conn := range []net.Conn{c, d} {
		go func() {
			_ = conn.SetDeadline(time.Now().Add(patience))
			buf := make([]byte, 64<<10)
			for {
				if _, err := conn.Write(buf); err != nil {
					failed <- err
					return
				}
			}
		}()
		go func() {
			buf := make([]byte, 64<<10)
			for {
				n, err := conn.Read(buf)
				received.Add(int64(n))
				if err != nil {
					return
				}
			}
		}()
	}
	waitFor(t, "bytes flowing through the hub", func() bool { return received.Load() > 4<<20 })
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		select {
		case <-failed:
		case <-time.After(patience):
			t.Fatal("a relayed connection still works after the hub closed")
		}
	}
	for _, m := range []*Member{a, b} {
		select {
		case <-m.Done():
		case <-time.After(patience):
			t.Fatal("a member did not notice the hub's end")
		}
		if !errors.Is(m.Err(), ErrUnreachable) {
			t.Errorf("member error %v, want ErrUnreachable", m.Err())
		}
	}
}

func TestSilentMemberForgotten(t *testing.T) {
	srv, addr := startHub(t, WithKeepalive(10*time.Millisecond))
	rawMember(t, addr, "p", poolauth.Secret{}, "mute", 10*time.Millisecond)
	waitFor(t, "the silent member forgotten", func() bool { return srv.Stats().Members == 0 })
	_, err := Relay(testCtx(t), addr, RelayRequest{Pool: "p", Key: "mute"})
	if !errors.Is(err, ErrNoSuchMember) {
		t.Fatalf("got %v, want ErrNoSuchMember", err)
	}
}

// A hub that answers the registration and then says nothing is noticed as gone.
func TestSilentHubNoticed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	hold := make(chan struct{})
	served := make(chan struct{})
	go func() {
		defer close(served)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(patience))
		if _, err := poolauth.Accept(c, func(string) (poolauth.Secret, bool) { return poolauth.Secret{}, true }); err != nil {
			return
		}
		if _, err := readFrame(c); err != nil {
			return
		}
		ans := registeredMsg{interval: 10 * time.Millisecond, observed: c.RemoteAddr().String()}
		if writeFrame(c, frameRegistered, ans.encode()) != nil {
			return
		}
		<-hold
	}()
	m, err := Register(testCtx(t), ln.Addr().String(), Registration{Pool: "p", Key: "k"}, WithClientKeepalive(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-m.Done():
	case <-time.After(patience):
		t.Fatal("the member did not notice the silent hub")
	}
	close(hold)
	<-served
	if !errors.Is(m.Err(), ErrUnreachable) {
		t.Errorf("member error %v, want ErrUnreachable", m.Err())
	}
	_ = m.Close()
}

func TestReRegisterReplaces(t *testing.T) {
	srv, addr := startHub(t)
	old := register(t, addr, Registration{Pool: "p", Key: "k"})
	fresh := register(t, addr, Registration{Pool: "p", Key: "k"})
	select {
	case <-old.Done():
	case <-time.After(patience):
		t.Fatal("the old registration was not ended")
	}
	if srv.Stats().Members != 1 {
		t.Fatalf("stats %v: want one member", srv.Stats())
	}
	c, err := Relay(testCtx(t), addr, RelayRequest{Pool: "p", Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	exchange(t, c, accepted(t, fresh), 1024)
}
