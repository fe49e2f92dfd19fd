package main

// An etcd cluster of OS processes for the registry-join experiment: the etcd server
// binary (Debian's etcd-server by default), one process per node on 127.0.0.1, data
// in a temporary directory, fsync as etcd does by default.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// defaultEtcdBinary is where Debian's etcd-server package installs the server.
const defaultEtcdBinary = "/usr/bin/etcd"

const (
	// etcdStartTimeout bounds the wait for a new cluster to elect a leader and
	// answer a linearizable read (a three-node cluster needs about a second).
	etcdStartTimeout = time.Minute
	// etcdStartAttempts is how often a cluster start is tried on fresh ports when
	// another process took a port between its release and etcd's bind.
	etcdStartAttempts = 3
	// etcdKillTimeout bounds the wait for a killed node to be reaped.
	etcdKillTimeout = 30 * time.Second
)

// errEtcdPortTaken says that a node found its port taken.
var errEtcdPortTaken = errors.New("a port was taken before etcd could bind it")

// etcdCluster is a running etcd cluster. stop must be called.
type etcdCluster struct {
	dir   string
	nodes []*etcdNode
}

// etcdNode is one etcd server process.
type etcdNode struct {
	name         string
	logPath      string
	client, peer int
	pid          int
	exited       chan struct{}
}

// findEtcd returns the etcd binary to run: path when given, else Debian's, else etcd
// in PATH.
func findEtcd(path string) (string, error) {
	if path != "" {
		if _, err := os.Stat(path); err != nil {
			return "", fmt.Errorf("etcd binary: %w", err)
		}
		return path, nil
	}
	if _, err := os.Stat(defaultEtcdBinary); err == nil {
		return defaultEtcdBinary, nil
	}
	p, err := exec.LookPath("etcd")
	if err != nil {
		return "", fmt.Errorf("no etcd server binary (%s, or etcd in PATH; apt-get install etcd-server): %w", defaultEtcdBinary, err)
	}
	return p, nil
}

// startEtcd starts an n-node cluster of binary under a new temporary directory and
// waits until it serves.
func startEtcd(ctx context.Context, binary string, n int) (*etcdCluster, error) {
	for attempt := 1; ; attempt++ {
		c, err := tryStartEtcd(ctx, binary, n)
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, errEtcdPortTaken) || attempt == etcdStartAttempts {
			return nil, fmt.Errorf("starting a %d-node etcd cluster: %w", n, err)
		}
	}
}

func tryStartEtcd(ctx context.Context, binary string, n int) (*etcdCluster, error) {
	dir, err := os.MkdirTemp("", "ibis-bench-etcd-")
	if err != nil {
		return nil, fmt.Errorf("etcd data directory: %w", err)
	}
	c := &etcdCluster{dir: dir}
	ports, err := freePorts(2 * n)
	if err != nil {
		c.stop()
		return nil, err
	}
	initial := make([]string, n)
	for i := range n {
		nd := &etcdNode{name: "node" + strconv.Itoa(i), client: ports[2*i], peer: ports[2*i+1]}
		nd.logPath = filepath.Join(dir, nd.name+".log")
		c.nodes = append(c.nodes, nd)
		initial[i] = nd.name + "=" + nd.peerURL()
	}
	token := fmt.Sprintf("ibis-bench-%d-%d", os.Getpid(), time.Now().UnixNano())
	for _, nd := range c.nodes {
		args := []string{
			"--name=" + nd.name,
			"--data-dir=" + filepath.Join(dir, nd.name+".data"),
			"--listen-client-urls=" + nd.clientURL(),
			"--advertise-client-urls=" + nd.clientURL(),
			"--listen-peer-urls=" + nd.peerURL(),
			"--initial-advertise-peer-urls=" + nd.peerURL(),
			"--initial-cluster=" + strings.Join(initial, ","),
			"--initial-cluster-token=" + token,
			"--initial-cluster-state=new",
			"--logger=zap",
			"--log-outputs=stderr",
		}
		if err := nd.start(binary, args); err != nil {
			c.stop()
			return nil, err
		}
	}
	if err := c.waitServing(ctx); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

func (n *etcdNode) clientURL() string { return "http://127.0.0.1:" + strconv.Itoa(n.client) }
func (n *etcdNode) peerURL() string   { return "http://127.0.0.1:" + strconv.Itoa(n.peer) }

// start runs the node. One goroutine starts, waits for and reaps the process and keeps
// its OS thread meanwhile: the kernel kills the node (Pdeathsig) when the thread that
// forked it ends, which is then only when this process dies, so no etcd outlives a
// killed benchmark.
func (n *etcdNode) start(binary string, args []string) error {
	logf, err := os.Create(n.logPath)
	if err != nil {
		return fmt.Errorf("etcd log of %s: %w", n.name, err)
	}
	cmd := exec.Command(binary, args...)
	for _, kv := range os.Environ() { // ETCD_* variables would act as flags
		if !strings.HasPrefix(kv, "ETCD_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	started := make(chan error, 1)
	n.exited = make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer close(n.exited)
		defer logf.Close()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
	}()
	if err := <-started; err != nil {
		<-n.exited
		n.exited = nil
		return fmt.Errorf("starting etcd %s: %w", n.name, err)
	}
	n.pid = cmd.Process.Pid
	return nil
}

// kill ends the node with SIGKILL and waits until it is reaped.
func (n *etcdNode) kill() error {
	if n.exited == nil {
		return nil
	}
	if err := syscall.Kill(n.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill etcd %s: %w", n.name, err)
	}
	select {
	case <-n.exited:
		return nil
	case <-time.After(etcdKillTimeout):
		return fmt.Errorf("etcd %s (pid %d) still runs %v after SIGKILL", n.name, n.pid, etcdKillTimeout)
	}
}

// hasExited reports whether the node's process has ended.
func (n *etcdNode) hasExited() bool {
	select {
	case <-n.exited:
		return true
	default:
		return false
	}
}

// waitServing waits until a linearizable read through all endpoints succeeds (a leader
// was elected and a quorum answers), or a node exited.
func (c *etcdCluster) waitServing(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, etcdStartTimeout)
	defer cancel()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.endpoints(), Logger: zap.NewNop(), DialTimeout: 2 * time.Second})
	if err != nil {
		return fmt.Errorf("etcd client for %v: %w", c.endpoints(), err)
	}
	defer cli.Close()
	for {
		for _, nd := range c.nodes {
			if nd.hasExited() {
				tail := readTail(nd.logPath, 20)
				if strings.Contains(tail, "address already in use") {
					return fmt.Errorf("%s: %w", nd.name, errEtcdPortTaken)
				}
				return fmt.Errorf("etcd %s exited while starting; its log ends:\n%s", nd.name, tail)
			}
		}
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := cli.Get(pctx, "ibis-bench/health")
		pcancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("etcd not serving after %v: %w (last error: %w)", etcdStartTimeout, ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// endpoints are the nodes' client addresses, host:port.
func (c *etcdCluster) endpoints() []string {
	eps := make([]string, len(c.nodes))
	for i, nd := range c.nodes {
		eps[i] = "127.0.0.1:" + strconv.Itoa(nd.client)
	}
	return eps
}

// pids are the nodes' process ids.
func (c *etcdCluster) pids() []int {
	ps := make([]int, len(c.nodes))
	for i, nd := range c.nodes {
		ps[i] = nd.pid
	}
	return ps
}

// stop kills every node and removes the data; it returns the first failure to kill.
func (c *etcdCluster) stop() error {
	var errs []error
	for _, nd := range c.nodes {
		errs = append(errs, nd.kill())
	}
	errs = append(errs, os.RemoveAll(c.dir))
	return errors.Join(errs...)
}

// freePorts returns n distinct ports on 127.0.0.1 that the kernel had free a moment
// ago: an external server cannot be told to listen on port 0 and say which port it
// got, so the ports are found by binding and released for it.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// readTail returns the last n lines of the file at path, or why it cannot.
func readTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
