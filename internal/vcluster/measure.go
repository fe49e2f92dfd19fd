package vcluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// RTT is what MeasureRTT found: medians of TCP connect times (one round trip each: SYN,
// SYN-ACK) and of one-byte echoes on one connection.
type RTT struct {
	Connect time.Duration
	Echo    time.Duration
	Samples int
}

// Transfer is what MeasureTransfer found.
type Transfer struct {
	Bytes   int64
	Elapsed time.Duration // from the first byte sent to the receiver's checksum back
	Intact  bool          // the receiver's SHA-256 matched what was sent
}

// BitsPerSec is the transfer's rate.
func (t Transfer) BitsPerSec() float64 { return float64(t.Bytes*8) / t.Elapsed.Seconds() }

// MeasureRTT measures n round trips from host from to host to (names h1 .. hN): a
// receiver runs on to, a prober on from, both copies of the running binary.
func (c *Cluster) MeasureRTT(ctx context.Context, from, to string, n int) (RTT, error) {
	res, err := c.probeOnce(ctx, from, to, "rtt", strconv.Itoa(n))
	if err != nil {
		return RTT{}, err
	}
	return RTT{Connect: median(res.Connect), Echo: median(res.Echo), Samples: len(res.Connect)}, nil
}

// MeasureTransfer sends size bytes over one TCP connection from host from to host to.
func (c *Cluster) MeasureTransfer(ctx context.Context, from, to string, size int64) (Transfer, error) {
	res, err := c.probeOnce(ctx, from, to, "bulk", strconv.FormatInt(size, 10))
	if err != nil {
		return Transfer{}, err
	}
	return Transfer{Bytes: res.Bytes, Elapsed: res.Elapsed, Intact: res.Intact}, nil
}

// SeenAs returns the address that host to sees a connection from host from come from.
func (c *Cluster) SeenAs(ctx context.Context, from, to string) (string, error) {
	res, err := c.probeOnce(ctx, from, to, "who")
	return res.Seen, err
}

// DialWithin tries one TCP connection from host from to host to and returns why it did not
// open within timeout (nil where it opened).
func (c *Cluster) DialWithin(ctx context.Context, from, to string, timeout time.Duration) error {
	res, err := c.probeOnce(ctx, from, to, "dial", timeout.String())
	if err != nil {
		return err
	}
	if res.Error != "" {
		return fmt.Errorf("vcluster: %s could not connect to %s: %s", from, to, res.Error)
	}
	return nil
}

// probeOnce runs a receiver on to and one probe on from, and returns the probe's result.
func (c *Cluster) probeOnce(ctx context.Context, from, to, mode string, args ...string) (probeResult, error) {
	addr, stop, err := c.startSink(ctx, to)
	if err != nil {
		return probeResult{}, err
	}
	res, perr := c.runProbe(ctx, from, append([]string{mode, addr}, args...)...)
	if err := stop(); err != nil && perr == nil {
		perr = err
	}
	return res, perr
}

// selfCommand is the running binary on host in role, with its standard error kept.
func (c *Cluster) selfCommand(ctx context.Context, host, role string, args ...string) (*exec.Cmd, *bytes.Buffer, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, fmt.Errorf("vcluster: the running binary: %w", err)
	}
	cmd := c.Command(ctx, host, exe, args...)
	cmd.Env = append(os.Environ(), envSelf+"="+role)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = time.Second
	return cmd, &stderr, nil
}

// startSink starts a receiver on host and returns its address; stop ends it.
func (c *Cluster) startSink(ctx context.Context, host string) (string, func() error, error) {
	h, err := c.Host(host)
	if err != nil {
		return "", nil, err
	}
	cmd, stderr, err := c.selfCommand(ctx, host, "wansink")
	if err != nil {
		return "", nil, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, fmt.Errorf("vcluster: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, fmt.Errorf("vcluster: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("vcluster: receiver on %s: %w", host, err)
	}
	stop := func() error {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			return fmt.Errorf("vcluster: receiver on %s: %w: %s", host, err, strings.TrimSpace(stderr.String()))
		}
		return nil
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	port, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		serr := stop()
		return "", nil, fmt.Errorf("vcluster: receiver on %s printed no port (%q): %v %v", host, line, err, serr)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return net.JoinHostPort(h.Addr, strconv.Itoa(port)), stop, nil
}

// runProbe runs a probe on host and decodes its result.
func (c *Cluster) runProbe(ctx context.Context, host string, args ...string) (probeResult, error) {
	var res probeResult
	cmd, stderr, err := c.selfCommand(ctx, host, "wanprobe", args...)
	if err != nil {
		return res, err
	}
	out, err := cmd.Output()
	if err != nil {
		return res, fmt.Errorf("vcluster: probe %q on %s: %w: %s", args, host, err, strings.TrimSpace(stderr.String()))
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return res, fmt.Errorf("vcluster: probe %q on %s printed %q: %w", args, host, out, err)
	}
	return res, nil
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
