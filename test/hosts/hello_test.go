package hosts_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ibisgo/ibis/internal/leakcheck"
	"github.com/ibisgo/ibis/internal/netns"
	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/internal/vcluster"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if programs.dir != "" {
		_ = os.RemoveAll(programs.dir)
	}
	if code == 0 {
		if err := goleak.Find(leakcheck.Options()...); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// caseBound ends a hung case; no case relies on it.
const caseBound = 3 * time.Minute

// programs are examples/hello and cmd/ibis-registry, built once for the package.
var programs struct {
	once           sync.Once
	dir            string
	hello, ibisReg string
	err            error
}

func build(t *testing.T) (hello, ibisReg string) {
	t.Helper()
	programs.once.Do(func() {
		dir, err := os.MkdirTemp("", "addrs-hosts-")
		if err != nil {
			programs.err = err
			return
		}
		programs.dir = dir
		cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator),
			"github.com/ibisgo/ibis/examples/hello", "github.com/ibisgo/ibis/cmd/ibis-registry")
		if out, err := cmd.CombinedOutput(); err != nil {
			programs.err = fmt.Errorf("go build: %w\n%s", err, out)
			return
		}
		programs.hello, programs.ibisReg = filepath.Join(dir, "hello"), filepath.Join(dir, "ibis-registry")
	})
	if programs.err != nil {
		t.Fatal(programs.err)
	}
	return programs.hello, programs.ibisReg
}

// network makes n hosts, or skips the test where namespaces cannot be made.
func network(ctx context.Context, t *testing.T, n int, opts ...netns.Option) *netns.Network {
	t.Helper()
	var id [4]byte
	if _, err := rand.Read(id[:]); err != nil {
		t.Fatal(err)
	}
	// Names that say whose they are, unique on the machine.
	prefix := "addrs-" + hex.EncodeToString(id[:])
	nw, err := netns.New(ctx, n, append([]netns.Option{netns.WithPrefix(prefix)}, opts...)...)
	if errors.Is(err, netns.ErrUnavailable) {
		vcluster.SkipOrFail(t, fmt.Sprintf("needs network namespaces (root and the ip command): %v", err))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := nw.Close(); err != nil {
			t.Errorf("removing the network: %v", err)
		}
	})
	return nw
}

// startRegistry runs ibis-registry on h, listening on h's address, and returns the
// address it reports.
func startRegistry(ctx context.Context, t *testing.T, h *netns.Host) (addr string, reg *selfexec.Child) {
	t.Helper()
	_, ibisReg := build(t)
	exe := h.Exec()
	c, err := selfexec.Start(ctx, []string{"-host", h.Addr, "-port", "0"}, selfexec.WithProgram(ibisReg),
		selfexec.WithLauncher(exe[0], exe[1:]...), selfexec.WithoutEnv("IBIS_"), selfexec.WithStdoutPipe())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	line, err := bufio.NewReader(c.StdoutPipe()).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "ibis-registry listening on ")
	if err != nil || !ok {
		c.Close()
		t.Fatalf("ibis-registry on %s said %q (%v); stderr:\n%s", h.Addr, line, err, c.Stderr())
	}
	return addr, c
}

// runHello runs examples/hello on every host, all in one pool at registry, with env
// added, and waits for them.
func runHello(ctx context.Context, t *testing.T, hosts []*netns.Host, registry, pool string, env ...string) []*selfexec.Child {
	t.Helper()
	hello, _ := build(t)
	env = append([]string{"IBIS_REGISTRY=" + registry, "IBIS_POOL=" + pool,
		fmt.Sprintf("IBIS_POOL_SIZE=%d", len(hosts))}, env...)
	var cs []*selfexec.Child
	for _, h := range hosts {
		exe := h.Exec()
		c, err := selfexec.Start(ctx, []string{"-timeout", "2m"}, selfexec.WithProgram(hello),
			selfexec.WithLauncher(exe[0], exe[1:]...), selfexec.WithoutEnv("IBIS_"), selfexec.WithEnv(env...))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		cs = append(cs, c)
	}
	for _, c := range cs {
		_ = c.Wait()
	}
	return cs
}

var (
	servedAll = regexp.MustCompile(`(?m)^server: served 6 requests; every client has left$`)
	serverID  = regexp.MustCompile(`(?m)^server \S+@(\S+): serving 2 clients`)
	reply     = regexp.MustCompile(`(?m)^client \(member \d\): reply \d: sum \S+ \(want \S+\)$`)
)

// TestHelloAcrossHosts: with a registry server on the first of three hosts and hello on
// each, given only IBIS_REGISTRY, IBIS_POOL and IBIS_POOL_SIZE (no IBIS_HOST), the pool
// works on tcp and on nio, over IPv4 and over IPv6 alone: every process publishes an
// address of its host that the others reach, the server answers the six requests of its
// two clients and ends once they have left.
func TestHelloAcrossHosts(t *testing.T) {
	for _, c := range []struct {
		name string
		impl string
		opts []netns.Option
	}{
		{"tcp", "tcp", nil},
		{"nio", "nio", nil},
		{"tcp-ipv6-only", "tcp", []netns.Option{netns.WithIPv6Only()}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), caseBound)
			defer cancel()
			nw := network(ctx, t, 3, c.opts...)
			hosts := nw.Hosts()
			reg, _ := startRegistry(ctx, t, hosts[0])
			cs := runHello(ctx, t, hosts, reg, "hosts-"+c.name, "IBIS_IMPL="+c.impl)
			servers := 0
			for i, p := range cs {
				out := p.Stdout()
				if p.ExitCode() != 0 {
					t.Fatalf("hello on %s: exit %d\nstdout:\n%s\nstderr:\n%s", hosts[i].Addr, p.ExitCode(), out, p.Stderr())
				}
				if m := serverID.FindStringSubmatch(out); m != nil {
					servers++
					if !servedAll.MatchString(out) {
						t.Errorf("the server on %s did not serve 6 requests:\n%s", hosts[i].Addr, out)
					}
					if !strings.Contains(m[1], hosts[i].Addr) || strings.Contains(m[1], "127.0.0.1") {
						t.Errorf("the server on %s published %q, want its host's address and no loopback", hosts[i].Addr, m[1])
					}
				} else if n := len(reply.FindAllString(out, -1)); n != 3 {
					t.Errorf("the client on %s printed %d replies, want 3:\n%s\nstderr:\n%s", hosts[i].Addr, n, out, p.Stderr())
				}
			}
			if servers != 1 {
				t.Fatalf("%d servers, want 1", servers)
			}
		})
	}
}

// TestLoopbackPinnedAcrossHosts: members pinned to 127.0.0.1 (IBIS_HOST) on three hosts
// cannot reach each other. The clients fail naming the address they tried and the hint
// to set IBIS_HOST, the server ends once they have left (it does not wait for requests
// that cannot come), and the registry warns that the pool's members publish loopback
// addresses from different hosts.
func TestLoopbackPinnedAcrossHosts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), caseBound)
	defer cancel()
	nw := network(ctx, t, 3)
	hosts := nw.Hosts()
	reg, regProc := startRegistry(ctx, t, hosts[0])
	cs := runHello(ctx, t, hosts, reg, "hosts-pinned", "IBIS_HOST=127.0.0.1")
	failed := 0
	for i, p := range cs {
		switch {
		case serverID.MatchString(p.Stdout()):
			if !strings.Contains(p.Stdout(), "every client has left") {
				t.Errorf("the server on %s did not end on its clients leaving: exit %d\nstdout:\n%s\nstderr:\n%s",
					hosts[i].Addr, p.ExitCode(), p.Stdout(), p.Stderr())
			}
		case p.ExitCode() != 0:
			failed++
			for _, s := range []string{"127.0.0.1:", "connection refused", "IBIS_HOST"} {
				if !strings.Contains(p.Stderr(), s) {
					t.Errorf("the client on %s does not say %q:\n%s", hosts[i].Addr, s, p.Stderr())
				}
			}
		default:
			t.Errorf("the client on %s succeeded although its server is on another host's loopback:\n%s", hosts[i].Addr, p.Stdout())
		}
	}
	if failed != 2 {
		t.Errorf("%d clients failed, want 2", failed)
	}
	regProc.Close()
	if n := strings.Count(regProc.Stderr(), "publish loopback addresses from different hosts"); n != 1 {
		t.Errorf("the registry warned %d times, want once:\n%s", n, regProc.Stderr())
	}
}
