package vcluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/ibisgo/ibis/internal/wanemu"
)

// envSelf makes a binary that links this package play a part of the cluster instead of its
// main (selfrole.go): "wanemu" is the link emulator.
const envSelf = "IBIS_VCLUSTER_SELF"

// emulatorStart bounds the wait for the emulator's control socket to answer.
const emulatorStart = time.Minute

// startEmulator starts the link emulator in the router namespace, as a daemon of the
// cluster, and waits until it answers on its control socket (it has its TUN device then).
func (c *Cluster) startEmulator(ctx context.Context, cfg config) error {
	c.st.WANControl = filepath.Join(c.dir, "wanemu.sock")
	conf := filepath.Join(c.dir, "wanemu.json")
	b, err := json.MarshalIndent(c.emulatorConfig(cfg), "", "  ")
	if err != nil {
		return fmt.Errorf("vcluster: %w", err)
	}
	if err := os.WriteFile(conf, b, 0o644); err != nil {
		return fmt.Errorf("vcluster: %w", err)
	}
	prog, env := cfg.emulator, []string(nil)
	if prog == "" {
		if prog, err = os.Executable(); err != nil {
			return fmt.Errorf("vcluster: the running binary, to run the link emulator: %w", err)
		}
		env = []string{envSelf + "=wanemu"}
	}
	argv := append(emulatorPriority(ctx), "nsenter", "--net=/run/netns/"+c.st.Router, "--", prog, "-config", conf)
	d, err := startDaemon("wanemu", filepath.Join(c.dir, "wanemu.log"), env, argv...)
	if err != nil {
		return err
	}
	c.addDaemon(d)
	ctx, cancel := context.WithTimeout(ctx, emulatorStart)
	defer cancel()
	for {
		_, err := wanemu.Control(ctx, c.st.WANControl, wanemu.Request{Op: "stats"})
		if err == nil {
			return c.save()
		}
		if xerr := d.exited(); xerr != nil {
			return xerr
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("vcluster: the link emulator did not answer within %v: %w; its log ends:\n%s", emulatorStart, err, logTail(d.log))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// emulatorPriority is the command prefix that runs the emulator ahead of the hosts'
// programs: it stands in for the kernel's network path, which does not queue behind
// processes for a CPU. Real-time (chrt -f) where allowed, else nice -10, else nothing.
// Under a loaded CPU this keeps its added delay near a tenth of a millisecond instead of
// milliseconds; it sleeps between packets, and the kernel keeps a share of each second
// for other processes whatever real-time processes do.
func emulatorPriority(ctx context.Context) []string {
	for _, p := range [][]string{{"chrt", "-f", "20"}, {"nice", "-n", "-10"}} {
		if exec.CommandContext(ctx, p[0], append(p[1:], "true")...).Run() == nil {
			return p
		}
	}
	return nil
}

// ErrNoGrid reports a wide-area operation on a cluster built without WithSites.
var ErrNoGrid = errors.New("vcluster: the cluster has no sites")

// control sends req to the cluster's link emulator.
func (c *Cluster) control(ctx context.Context, req wanemu.Request) (wanemu.Reply, error) {
	if c.st.WANControl == "" {
		return wanemu.Reply{}, fmt.Errorf("%w: %s needs WithSites", ErrNoGrid, req.Op)
	}
	if req.Op != "stats" && (req.Site < 1 || req.Site > len(c.st.Sites)) {
		return wanemu.Reply{}, fmt.Errorf("%w: site %d (the grid has sites 1 to %d)", ErrInvalid, req.Site, len(c.st.Sites))
	}
	rep, err := wanemu.Control(ctx, c.st.WANControl, req)
	if err != nil {
		return rep, fmt.Errorf("vcluster: %w", err)
	}
	return rep, nil
}

// WANDown takes site's wide-area link down (1 is the first site): nothing passes between
// the site and the others until WANUp; what was in flight is lost. Connections are not
// told; within the site all works.
func (c *Cluster) WANDown(ctx context.Context, site int) error {
	_, err := c.control(ctx, wanemu.Request{Op: "down", Site: site})
	return err
}

// WANUp brings site's wide-area link up again, with the delay and loss it had.
func (c *Cluster) WANUp(ctx context.Context, site int) error {
	_, err := c.control(ctx, wanemu.Request{Op: "up", Site: site})
	return err
}

// SetWAN changes the delay and loss of site's wide-area link while the grid runs. A packet
// between two sites is held for the mean of their delays and lost with the mean of their
// losses (internal/wanemu), so that one setting for all sites is the delay between any two.
func (c *Cluster) SetWAN(ctx context.Context, site int, delay time.Duration, loss float64) error {
	_, err := c.control(ctx, wanemu.Request{Op: "set", Site: site, Delay: delay, Loss: loss})
	return err
}

// WANStats returns the emulator's counters (packets passed, lost, dropped for the bound or
// a link down, per pair of sites) and the sites' settings.
func (c *Cluster) WANStats(ctx context.Context) (wanemu.Stats, error) {
	rep, err := c.control(ctx, wanemu.Request{Op: "stats"})
	return rep.Stats, err
}
