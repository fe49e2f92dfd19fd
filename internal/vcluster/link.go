package vcluster

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"time"
)

// LinkDown unplugs host's cable at the switch: nothing passes between the host and the other
// hosts, in either direction, until LinkUp. Connections are not told; their packets are
// lost, as on a real link that went down.
func (c *Cluster) LinkDown(ctx context.Context, host string) error {
	return c.setLink(ctx, host, "down")
}

// LinkUp plugs host's cable in again.
func (c *Cluster) LinkUp(ctx context.Context, host string) error {
	return c.setLink(ctx, host, "up")
}

func (c *Cluster) setLink(ctx context.Context, host, state string) error {
	h, err := c.Host(host)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	sw := h.Switch
	if sw == "" {
		sw = c.st.ID + "-sw"
	}
	out, err := exec.CommandContext(ctx, "ip", "-n", sw, "link", "set", h.SwitchPort, state).CombinedOutput()
	if err != nil {
		return fmt.Errorf("vcluster: link of %s %s: %w: %s", host, state, err, bytes.TrimSpace(out))
	}
	return nil
}
