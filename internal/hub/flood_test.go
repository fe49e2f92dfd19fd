package hub

import (
	"net"
	"runtime"
	"sync"
	"testing"

	"github.com/ibisgo/ibis/internal/poolauth"
)

// floodBound is what 2,000 strangers may add to the process's heap and stacks while
// the hub holds them off (the test's own client sockets included): the hub keeps at
// most DefaultMaxHandshakesPerIP of one address in its pool check, and refuses the
// rest after a short, bounded exchange.
const floodBound = 16 << 20

func inUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse + ms.StackInuse
}

func TestStrangerFlood(t *testing.T) {
	secret := poolauth.New([]byte("s3cret"))
	srv, addr := startHub(t, WithSecrets(secretLookup("p", secret)))
	base := inUse()

	// Strangers come from 127.0.0.2: half say nothing and stay, half try a wrong secret.
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}
	const strangers = 2000
	var (
		mu     sync.Mutex
		silent []net.Conn
		wg     sync.WaitGroup
	)
	defer func() {
		for _, c := range silent {
			_ = c.Close()
		}
	}()
	wrong := poolauth.New([]byte("guess"))
	for batch := 0; batch < strangers; batch += 100 {
		for i := range 100 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := d.Dial("tcp", addr)
				if err != nil {
					t.Errorf("stranger dial: %v", err)
					return
				}
				if i%2 == 0 {
					mu.Lock()
					silent = append(silent, c)
					mu.Unlock()
					return
				}
				defer c.Close()
				if err := poolauth.Dial(c, "p", wrong); err == nil {
					t.Error("a wrong secret passed the pool check")
				}
			}()
		}
		wg.Wait()
	}
	st := srv.Stats()
	if st.Handshakes > DefaultMaxHandshakesPerIP {
		t.Errorf("stats %v: more than %d connections of one address in their pool check", st, DefaultMaxHandshakesPerIP)
	}
	if st.Refused == 0 {
		t.Errorf("stats %v: nobody refused", st)
	}
	grown := int64(inUse()) - int64(base)
	t.Logf("2,000 strangers: %v; heap and stacks grew %d KiB", st, grown>>10)
	if grown > floodBound {
		t.Errorf("heap and stacks grew %d bytes during the flood, more than %d", grown, floodBound)
	}

	// Members (from 127.0.0.1) are still served while the strangers hold on.
	a := register(t, addr, Registration{Pool: "p", Secret: secret, Key: "key-a"})
	c, err := Relay(testCtx(t), addr, RelayRequest{Pool: "p", Secret: secret, Key: "key-a"})
	if err != nil {
		t.Fatalf("relay during the flood: %v", err)
	}
	defer c.Close()
	exchange(t, c, accepted(t, a), 1<<20)
}
