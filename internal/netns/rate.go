package netns

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
)

// SetRate limits the host's cable to bitsPerSec in each direction, with a token bucket
// filter (tc tbf) on both of its ends: the host's eth0 shapes what it sends, the switch
// port what it receives. This kernel has no netem, so a rate is all a link can be given.
// It needs the `tc` command; without it the error matches ErrUnavailable.
func (h *Host) SetRate(ctx context.Context, bitsPerSec uint64) error {
	if bitsPerSec < 8000 {
		return fmt.Errorf("%w: rate %d bit/s (at least 8000)", ErrInvalid, bitsPerSec)
	}
	if _, err := exec.LookPath("tc"); err != nil {
		return fmt.Errorf("%w: %w (Debian: apt-get install iproute2)", ErrUnavailable, err)
	}
	if err := setTBF(ctx, h.Namespace, "eth0", bitsPerSec); err != nil {
		return err
	}
	return setTBF(ctx, h.sw, h.port, bitsPerSec)
}

// setTBF limits what dev in namespace ns sends to bitsPerSec (tc tbf).
func setTBF(ctx context.Context, ns, dev string, bitsPerSec uint64) error {
	if _, err := exec.LookPath("tc"); err != nil {
		return fmt.Errorf("%w: %w (Debian: apt-get install iproute2)", ErrUnavailable, err)
	}
	// The bucket holds 10 ms of traffic, and never less than a 64 KiB segment that
	// the veth's offloads may hand it whole.
	burst := max(bitsPerSec/8/100, 64<<10)
	return tc(ctx, "-n", ns, "qdisc", "replace", "dev", dev, "root", "tbf", "rate",
		strconv.FormatUint(bitsPerSec, 10)+"bit", "burst", strconv.FormatUint(burst, 10), "latency", "100ms")
}

// tc runs the tc command with args and returns its error with what it printed.
func tc(ctx context.Context, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, cmdTimeout)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "tc", args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("netns: tc %q: %w: %s", args, err, bytes.TrimSpace(out.Bytes()))
	}
	return nil
}
