package conformance

import (
	"context"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

// Environment variables that make a test binary play a child's part.
const (
	envCase  = "IBIS_CONFORMANCE_CASE"
	envIndex = "IBIS_CONFORMANCE_INDEX"
	envProps = "IBIS_CONFORMANCE_PROPS"
)

// caseTimeout bounds one case; it only ends a hung run, no case relies on it.
const caseTimeout = 90 * time.Second

// heartbeat is the registry's heartbeat interval in the suite. A killed member is
// noticed at once through its broken registry connection; a silent one after the
// registry's death timeout (30s by default), and a member declared dead has its
// connections cut. Both are generous: a child starved of CPU on a loaded CI machine (the
// load cases under -race, packages tested in parallel) must not be taken for dead. A case
// that needs a silent member found sets its own (testCase.deathTimeout).
const heartbeat = 10 * time.Second

// Options selects the implementation under test.
type Options struct {
	// Impl is the implementation's registered name.
	Impl string
	// Properties are implementation-specific settings (for example flavours), given to
	// every member of the pool.
	Properties map[string]string
	// RegistryHost is the address the case's registry listens on; "" is 127.0.0.1. A run
	// across hosts (test/cluster) gives the parent's host address, which the children reach.
	RegistryHost string
	// Child, when set, gives more start options for child i: a launcher that runs it on
	// another host (selfexec.WithLauncher) and the environment it needs there.
	Child func(i int) []selfexec.Option
}

// Env is what a case's parts get: their Ibis instance and their place in the pool.
type Env struct {
	Ctx      context.Context
	Ibis     ipl.Ibis
	Index    int                // -1 for the parent (the test process), else the child's index
	Parent   ipl.IbisIdentifier // the test process's instance
	Children []ipl.IbisIdentifier
	// T is set for the parent only.
	T *testing.T

	kids []*child
}

type testCase struct {
	name     string
	children int
	kills    bool // the case kills a member (Env.Kill)
	// messageTimeout, when set, is every member's message timeout (ipl.WithMessageTimeout).
	messageTimeout time.Duration
	// childMaxMessage, when set, is the children's message limit
	// (ipl.WithMaxMessageSize); the parent keeps the default.
	childMaxMessage int64
	// heartbeat, when set, replaces the suite's heartbeat interval.
	heartbeat time.Duration
	// deathTimeout, when set, replaces the registry's death timeout (how long a silent
	// member stays one; registry.DefaultDeathTimeout otherwise).
	deathTimeout time.Duration
	parent       func(e *Env)
	child        func(e *Env) error
}

var (
	casesMu sync.Mutex
	cases   = map[string]*testCase{}
)

func register(tc *testCase) *testCase {
	casesMu.Lock()
	defer casesMu.Unlock()
	cases[tc.name] = tc
	return tc
}

// IsChild reports whether this process was started by the suite to play a child part
// (under mpirun: a rank other than 0, see RunMPI).
func IsChild() bool { return os.Getenv(envCase) != "" && !isMPIParent() }

func encodeProps(p map[string]string) string {
	var kv []string
	for k, v := range p {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return strings.Join(kv, ";")
}

func decodeProps(s string) map[string]string {
	p := map[string]string{}
	for _, kv := range strings.Split(s, ";") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			p[k] = v
		}
	}
	return p
}

func newIbis(ctx context.Context, impl string, props map[string]string, opts ...ipl.Option) (ipl.Ibis, error) {
	opts = append(opts, ipl.WithImplementation(impl), ipl.WithPortTypes(AllPortTypes...),
		ipl.WithCapabilities(ipl.ElectionsStrict, ipl.MembershipTotallyOrdered, ipl.Signals, ipl.Termination))
	for k, v := range props {
		opts = append(opts, ipl.WithProperty(k, v))
	}
	return ipl.New(ctx, opts...)
}

// RunChild plays the child part named by the environment and returns the exit status.
func RunChild() int {
	name := os.Getenv(envCase)
	casesMu.Lock()
	tc := cases[name]
	casesMu.Unlock()
	if tc == nil {
		fmt.Fprintf(os.Stderr, "conformance: unknown case %q\n", name)
		return 2
	}
	idx, _ := strconv.Atoi(os.Getenv(envIndex))
	ctx, cancel := context.WithTimeout(context.Background(), caseTimeout)
	defer cancel()
	if rank, ok := mpiRank(); ok {
		idx = rank - 1
		if idx >= tc.children {
			return runIdle(ctx, rank)
		}
	}
	ib, err := newIbis(ctx, os.Getenv(ipl.EnvImpl), decodeProps(os.Getenv(envProps)), ipl.WithTag(fmt.Sprintf("child-%d", idx)))
	if err != nil {
		fmt.Fprintf(os.Stderr, "child %d: %v\n", idx, err)
		return 1
	}
	defer ib.Close()
	parent, err := ib.Registry().ElectionResult(ctx, "parent")
	if err != nil {
		fmt.Fprintf(os.Stderr, "child %d: finding the parent: %v\n", idx, err)
		return 1
	}
	e := &Env{Ctx: ctx, Ibis: ib, Index: idx, Parent: parent}
	if err := ib.Registry().WaitUntilPoolClosed(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "child %d: waiting for the pool: %v\n", idx, err)
		return 1
	}
	e.Children = childrenOf(ib)
	if err := tc.child(e); err != nil {
		fmt.Fprintf(os.Stderr, "child %d of %s: %v\n", idx, name, err)
		return 1
	}
	return 0
}

func childrenOf(ib ipl.Ibis) []ipl.IbisIdentifier {
	var out []ipl.IbisIdentifier
	for _, m := range ib.Registry().Members() {
		if strings.HasPrefix(m.Tag, "child-") {
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tag < out[j].Tag })
	return out
}

// child is a running child process.
type child struct {
	c        *selfexec.Child // its output: stdout and stderr together
	killed   bool
	reported bool // its output is already in the test log
}

// runCase runs one case: a registry, the parent's instance, the children's processes.
func runCase(t *testing.T, opts Options, tc *testCase) {
	t.Helper()
	hb := heartbeat
	if tc.heartbeat != 0 {
		hb = tc.heartbeat
	}
	sopts := []registry.ServerOption{registry.WithHeartbeatInterval(hb)}
	if tc.deathTimeout != 0 {
		sopts = append(sopts, registry.WithDeathTimeout(tc.deathTimeout))
	}
	regHost := "127.0.0.1"
	if opts.RegistryHost != "" {
		regHost = opts.RegistryHost
	}
	srv, err := registry.StartEmbedded(net.JoinHostPort(regHost, "0"), sopts...)
	if err != nil {
		t.Fatalf("starting registry: %v", err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), caseTimeout)
	defer cancel()
	pool := fmt.Sprintf("%s-%d", tc.name, time.Now().UnixNano())
	size := tc.children + 1
	popts := []ipl.Option{ipl.WithRegistry(srv.Addr()), ipl.WithPool(pool), ipl.WithPoolSize(size), ipl.WithTag("parent")}
	var cenv []string
	if tc.messageTimeout != 0 {
		popts = append(popts, ipl.WithMessageTimeout(tc.messageTimeout))
		cenv = append(cenv, ipl.EnvMessageTimeout+"="+tc.messageTimeout.String())
	}
	if tc.childMaxMessage != 0 {
		cenv = append(cenv, fmt.Sprintf("%s=%d", ipl.EnvMaxMsg, tc.childMaxMessage))
	}
	ib, err := newIbis(ctx, opts.Impl, opts.Properties, popts...)
	if err != nil {
		t.Fatalf("starting the parent's Ibis: %v", err)
	}
	defer ib.Close()
	if _, err := ib.Registry().Elect(ctx, "parent"); err != nil {
		t.Fatalf("electing the parent: %v", err)
	}
	kids := make([]*child, tc.children)
	defer func() {
		for i, c := range kids {
			if c == nil {
				continue // its start failed (the Fatalf below)
			}
			err := c.c.Kill()
			if t.Failed() && !c.reported {
				t.Logf("child %d ended with %v; its output:\n%s", i, err, c.c.Output())
			}
		}
	}()
	for i := range kids {
		env := append([]string{envCase + "=" + tc.name, envIndex + "=" + strconv.Itoa(i), envProps + "=" + encodeProps(opts.Properties),
			ipl.EnvRegistry + "=" + srv.Addr(), ipl.EnvPool + "=" + pool, ipl.EnvPoolSize + "=" + strconv.Itoa(size),
			ipl.EnvImpl + "=" + opts.Impl}, cenv...)
		copts := []selfexec.Option{selfexec.WithEnv(env...), selfexec.WithCombinedOutput()}
		if opts.Child != nil {
			copts = append(copts, opts.Child(i)...)
		}
		sc, err := selfexec.Start(context.Background(), []string{selfexec.NoTests}, copts...)
		if err != nil {
			t.Fatalf("starting child %d: %v", i, err)
		}
		kids[i] = &child{c: sc}
	}
	e := &Env{Ctx: ctx, Ibis: ib, Index: -1, Parent: ib.Identifier(), T: t, kids: kids}
	if err := ib.Registry().WaitUntilPoolClosed(ctx); err != nil {
		t.Fatalf("waiting for the children to join: %v", err)
	}
	e.Children = childrenOf(ib)
	tc.parent(e)
	for i, c := range kids {
		if c.killed {
			continue
		}
		select {
		case <-c.c.Done():
			if err := c.c.Wait(); err != nil {
				c.reported = true
				t.Errorf("child %d: %v\n%s", i, err, c.c.Output())
			}
		case <-ctx.Done():
			_ = c.c.Kill()
			c.reported = true
			t.Errorf("child %d did not end\n%s", i, c.c.Output())
		}
	}
}

// Stop suspends child i with SIGSTOP (a process that stops answering, as a swapped-out
// or debugged one does); Continue resumes it.
func (e *Env) Stop(i int) { _ = e.kids[i].c.Signal(syscall.SIGSTOP) }

// Continue resumes a child suspended by Stop.
func (e *Env) Continue(i int) { _ = e.kids[i].c.Signal(syscall.SIGCONT) }

// Wait waits for child i to end and returns its exit status as an error (nil: exit 0).
func (e *Env) Wait(i int) error {
	c := e.kids[i]
	c.killed = true // ended and judged here, not again at the end of the case
	select {
	case <-c.c.Done():
		if err := c.c.Wait(); err != nil {
			c.reported = true
			return fmt.Errorf("%w\n%s", err, c.c.Output())
		}
		return nil
	case <-e.Ctx.Done():
		return fmt.Errorf("child %d did not end: %w", i, e.Ctx.Err())
	}
}

// Kill ends child i with SIGKILL and waits for it to be gone (a fault-injection step).
func (e *Env) Kill(i int) {
	c := e.kids[i]
	c.killed = true
	_ = c.c.Kill()
}

// sortedCases returns the suite's cases in the order of their names.
func sortedCases() []*testCase {
	casesMu.Lock()
	list := make([]*testCase, 0, len(cases))
	for _, tc := range cases {
		list = append(list, tc)
	}
	casesMu.Unlock()
	sort.Slice(list, func(i, j int) bool { return list[i].name < list[j].name })
	return list
}

// Run runs every case of the suite against one implementation.
func Run(t *testing.T, opts Options) {
	for _, tc := range sortedCases() {
		t.Run(tc.name, func(t *testing.T) { runCase(t, opts, tc) })
	}
}
