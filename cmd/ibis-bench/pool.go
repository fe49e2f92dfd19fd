package main

import (
	"context"
	"os"
	"strconv"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/cluster"
	"github.com/ibisgo/ibis/ipl"
)

// poolSettings say whether the experiment runs inside an existing pool.
type poolSettings struct {
	registry, name string
	size           int
}

// withEnvironment fills what the flags left unset from the IBIS_* environment, as
// ibis-run and cluster launchers set it.
func (p poolSettings) withEnvironment() poolSettings {
	if p.registry == "" {
		p.registry = os.Getenv(ipl.EnvRegistry)
	}
	if p.name == "" {
		p.name = os.Getenv(ipl.EnvPool)
	}
	if p.name == "" {
		p.name = "default"
	}
	if p.size == 0 {
		p.size, _ = strconv.Atoi(os.Getenv(ipl.EnvPoolSize))
	}
	return p
}

// peerArgs returns the command line of a peer process started by the suite.
func peerArgs() ([]string, bool) { return cluster.PeerArgs() }

// isPeer reports whether this process is a peer started by the suite.
func isPeer() bool { return cluster.IsPeer() }

// join puts this process into the experiment's pool: the suite's own peers, or the
// existing pool given by -registry or the environment. members is how many processes
// the experiment starts when it starts its own (at least two for any network
// experiment); an existing pool must have at least minMembers.
func (e *env) join(ctx context.Context, members, minMembers int, pts ...ipl.PortType) (*cluster.Group, error) {
	return cluster.Join(ctx, cluster.Settings{
		Registry: e.pool.registry,
		Pool:     e.pool.name,
		Size:     e.pool.size,
		Impl:     e.Impl,
		Props:    e.Props,
		Args:     append([]string{e.command}, e.args...),
		Stderr:   e.stderr,
		Log:      e.Log,
	}, cluster.Spec{Members: members, MinMembers: minMembers, PortTypes: pts, Tag: "ibis-bench-" + e.command})
}
