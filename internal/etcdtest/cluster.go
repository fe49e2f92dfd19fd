package etcdtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	// clusterStartTimeout bounds the wait for a new cluster to elect a leader and
	// serve; a three-node cluster does so in about a second (the election timeout).
	clusterStartTimeout = 60 * time.Second
	// processTimeout bounds the wait for a signalled process to change state.
	processTimeout = 30 * time.Second
	// startAttempts is how often StartCluster picks new ports when one was taken.
	startAttempts = 5
	// logTailLines is how much of each node's log a failed test shows.
	logTailLines = 40
)

// ClusterOption configures StartCluster.
type ClusterOption func(*clusterConfig)

type clusterConfig struct {
	flags []string
}

// WithFlags adds command-line flags to every etcd process (for instance
// "--heartbeat-interval=50"); they come after the ones StartCluster sets.
func WithFlags(flags ...string) ClusterOption {
	return func(c *clusterConfig) { c.flags = append(c.flags, flags...) }
}

// Cluster is an etcd cluster of Debian's etcd-server binary, one OS process per
// member, on 127.0.0.1. Nodes are numbered from 0. Its processes are killed at
// t.Cleanup, also when the test fails; the kernel kills them if the test binary
// dies first. The methods may be called from any goroutine.
type Cluster struct {
	t      testing.TB
	binary string
	nodes  []*node
}

// StartCluster starts an n-node etcd cluster (n is 1 or 3 in the registry's tests)
// with its data in t.TempDir() and waits until it has a leader and serves. It skips
// the test when etcd is not installed, or fails it where IBIS_REQUIRE_ETCD=1.
//
// The nodes keep etcd's default heartbeat (100 ms) and election timeout (1 s), so
// that failover takes as long as in production, and run with --pre-vote (etcd's
// default since 3.5): a node that was frozen or cut off cannot depose a working
// leader when it comes back.
func StartCluster(t testing.TB, n int, opts ...ClusterOption) *Cluster {
	t.Helper()
	if n < 1 {
		t.Fatalf("etcdtest: StartCluster with %d nodes", n)
	}
	var cfg clusterConfig
	for _, o := range opts {
		o(&cfg)
	}
	c := &Cluster{t: t, binary: etcdBinary(t)}
	// The directory is made before the cleanup is registered, so that it is removed
	// after the processes are killed and their logs shown.
	dir := t.TempDir()
	t.Cleanup(c.cleanup)

	for attempt := 1; ; attempt++ {
		err := c.tryStart(filepath.Join(dir, "attempt"+strconv.Itoa(attempt)), n, cfg)
		if err == nil {
			return c
		}
		c.killAll()
		if !errors.Is(err, errPortTaken) || attempt == startAttempts {
			c.dumpLogs()
			t.Fatalf("etcdtest: start %d-node etcd cluster: %v", n, err)
		}
		t.Logf("etcdtest: attempt %d: %v; starting again on other ports", attempt, err)
	}
}

// pickPorts finds the ports of a new cluster; tests replace it to take one away.
var pickPorts = freePorts

// errPortTaken says that another process bound a port between freePorts and etcd.
var errPortTaken = errors.New("a port was taken before etcd could bind it")

// tryStart starts all nodes on fresh ports, with data and logs in a new directory
// dir, and waits until the cluster serves.
func (c *Cluster) tryStart(dir string, n int, cfg clusterConfig) error {
	ports, err := pickPorts(2 * n)
	if err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("etcdtest: %w", err)
	}
	c.nodes = make([]*node, n)
	initial := make([]string, n)
	for i := range c.nodes {
		name := "node" + strconv.Itoa(i)
		c.nodes[i] = &node{
			name:       name,
			dataDir:    filepath.Join(dir, name+".data"),
			logPath:    filepath.Join(dir, name+".log"),
			clientPort: ports[2*i],
			peerPort:   ports[2*i+1],
		}
		initial[i] = name + "=" + c.nodes[i].peerURL()
	}
	token := fmt.Sprintf("etcdtest-%d-%d", os.Getpid(), time.Now().UnixNano())
	for _, nd := range c.nodes {
		nd.args = append([]string{
			"--name=" + nd.name,
			"--data-dir=" + nd.dataDir,
			"--listen-client-urls=" + nd.clientURL(),
			"--advertise-client-urls=" + nd.clientURL(),
			"--listen-peer-urls=" + nd.peerURL(),
			"--initial-advertise-peer-urls=" + nd.peerURL(),
			"--initial-cluster=" + strings.Join(initial, ","),
			"--initial-cluster-token=" + token,
			"--initial-cluster-state=new",
			"--pre-vote=true",
			"--logger=zap",
			"--log-outputs=stderr",
		}, cfg.flags...)
	}
	for _, nd := range c.nodes {
		if err := nd.start(c.binary); err != nil {
			return err
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), clusterStartTimeout)
	defer cancel()
	for {
		for _, nd := range c.nodes {
			if done, exitErr := nd.exitedWith(); done {
				if strings.Contains(readTail(nd.logPath, logTailLines), "address already in use") {
					return fmt.Errorf("%s: %w", nd.name, errPortTaken)
				}
				return fmt.Errorf("%s exited while starting (%v)", nd.name, exitErr)
			}
		}
		probeCtx, probeCancel := context.WithTimeout(ctx, probeTimeout)
		err := c.healthy(probeCtx)
		probeCancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not serving after %v: %w", clusterStartTimeout, err)
		case <-time.After(pollInterval):
		}
	}
}

// N returns the number of nodes.
func (c *Cluster) N() int { return len(c.nodes) }

// Endpoints returns every node's client endpoint ("127.0.0.1:port"), node i at
// index i, whether the node runs or not.
func (c *Cluster) Endpoints() []string {
	eps := make([]string, len(c.nodes))
	for i, nd := range c.nodes {
		eps[i] = nd.endpoint()
	}
	return eps
}

// LogPath returns the file that node i's output goes to (all its runs).
func (c *Cluster) LogPath(i int) string { return c.node(i).logPath }

// Kill sends SIGKILL to node i and waits until it is gone. Its data stays for
// Restart. Killing a node that is not running does nothing.
func (c *Cluster) Kill(i int) error { return c.node(i).kill() }

// Stop freezes node i with SIGSTOP, as a hung machine would be: its connections
// stay open and nothing answers on them.
func (c *Cluster) Stop(i int) error { return c.node(i).freeze(true) }

// Cont resumes node i after Stop with SIGCONT.
func (c *Cluster) Cont(i int) error { return c.node(i).freeze(false) }

// Restart kills node i if it runs and starts it again with the same data and ports.
// It does not wait for the node to serve: WaitHealthy does.
func (c *Cluster) Restart(i int) error {
	nd := c.node(i)
	if err := nd.kill(); err != nil {
		return err
	}
	return nd.start(c.binary)
}

// StopAll kills every node (SIGKILL) and waits until all are gone: the whole etcd
// service is down, its data kept for StartAll.
func (c *Cluster) StopAll() error {
	var errs []error
	for _, nd := range c.nodes {
		errs = append(errs, nd.kill())
	}
	return errors.Join(errs...)
}

// StartAll starts every node that is not running, with its data and ports. It does
// not wait for the cluster to serve: WaitHealthy does.
func (c *Cluster) StartAll() error {
	var errs []error
	for _, nd := range c.nodes {
		nd.mu.Lock()
		up := nd.running()
		nd.mu.Unlock()
		if !up {
			errs = append(errs, nd.start(c.binary))
		}
	}
	return errors.Join(errs...)
}

// node returns node i; an index out of range is a bug in the test.
func (c *Cluster) node(i int) *node {
	if i < 0 || i >= len(c.nodes) {
		panic(fmt.Sprintf("etcdtest: node %d of a %d-node cluster", i, len(c.nodes)))
	}
	return c.nodes[i]
}

// killAll kills every node, reporting failures in the test log.
func (c *Cluster) killAll() {
	for _, nd := range c.nodes {
		if err := nd.kill(); err != nil {
			c.t.Errorf("%v", err)
		}
	}
}

// cleanup kills the processes and, when the test failed, shows the end of each
// node's log.
func (c *Cluster) cleanup() {
	c.killAll()
	if c.t.Failed() {
		c.dumpLogs()
	}
}

func (c *Cluster) dumpLogs() {
	for _, nd := range c.nodes {
		c.t.Logf("etcdtest: last %d lines of %s (%s):\n%s", logTailLines, nd.name, nd.logPath, readTail(nd.logPath, logTailLines))
	}
}

// readTail returns the last n lines of the file at path, or why it cannot.
func readTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
