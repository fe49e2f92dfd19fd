package etcdtest

import (
	"context"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

const (
	// probeTimeout bounds one round of health questions to the nodes.
	probeTimeout = 2 * time.Second
	// pollInterval is the pause between two rounds of questions.
	pollInterval = 50 * time.Millisecond
)

// errNoLeader says that the serving nodes do not (yet) agree on a serving leader.
var errNoLeader = errors.New("etcdtest: no agreed leader among the serving nodes")

// WaitHealthy waits until every serving node (started and not frozen) names the
// same leader, the leader is one of them, and a linearizable read through them
// succeeds, i.e. a quorum answers. It returns the last problem seen if ctx ends
// first.
func (c *Cluster) WaitHealthy(ctx context.Context) error {
	return c.poll(ctx, func(ctx context.Context) error { return c.healthy(ctx) })
}

// Leader waits until the serving nodes agree on a leader and returns its index.
func (c *Cluster) Leader(ctx context.Context) (int, error) {
	leader := -1
	err := c.poll(ctx, func(ctx context.Context) error {
		var err error
		leader, err = c.leader(ctx)
		return err
	})
	return leader, err
}

// poll calls check until it succeeds or ctx ends, giving each call probeTimeout.
func (c *Cluster) poll(ctx context.Context, check func(context.Context) error) error {
	for {
		probeCtx, cancel := context.WithTimeout(ctx, probeTimeout)
		err := check(probeCtx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("etcdtest: %w (last problem: %w)", ctx.Err(), err)
		case <-time.After(pollInterval):
		}
	}
}

// healthy checks the cluster once.
func (c *Cluster) healthy(ctx context.Context) error {
	if _, err := c.leader(ctx); err != nil {
		return err
	}
	cli, err := c.dial(c.servingEndpoints())
	if err != nil {
		return err
	}
	defer cli.Close()
	if _, err := cli.Get(ctx, "etcdtest/health"); err != nil {
		return fmt.Errorf("etcdtest: linearizable read: %w", err)
	}
	return nil
}

// leader asks every serving node for its status once and returns the index of the
// leader they all name.
func (c *Cluster) leader(ctx context.Context) (int, error) {
	serving := c.serving()
	if len(serving) == 0 {
		return -1, fmt.Errorf("%w: no node is serving", errNoLeader)
	}
	cli, err := c.dial(c.servingEndpoints())
	if err != nil {
		return -1, err
	}
	defer cli.Close()
	ids := make(map[uint64]int, len(serving))
	var leaderID uint64
	for _, i := range serving {
		st, err := cli.Status(ctx, c.nodes[i].endpoint())
		if err != nil {
			return -1, fmt.Errorf("etcdtest: status of %s: %w", c.nodes[i].name, err)
		}
		ids[st.Header.MemberId] = i
		switch {
		case st.Leader == 0:
			return -1, fmt.Errorf("%w: %s knows no leader", errNoLeader, c.nodes[i].name)
		case leaderID != 0 && st.Leader != leaderID:
			return -1, fmt.Errorf("%w: %s names leader %x, another node %x", errNoLeader, c.nodes[i].name, st.Leader, leaderID)
		}
		leaderID = st.Leader
	}
	i, ok := ids[leaderID]
	if !ok {
		return -1, fmt.Errorf("%w: leader %x is not serving", errNoLeader, leaderID)
	}
	return i, nil
}

// serving returns the indexes of the nodes that run and are not frozen.
func (c *Cluster) serving() []int {
	var s []int
	for i, nd := range c.nodes {
		if nd.isServing() {
			s = append(s, i)
		}
	}
	return s
}

func (c *Cluster) servingEndpoints() []string {
	var eps []string
	for _, i := range c.serving() {
		eps = append(eps, c.nodes[i].endpoint())
	}
	return eps
}

// dial opens a client on endpoints without waiting for a connection: the caller's
// requests carry the deadline.
func (c *Cluster) dial(endpoints []string) (*clientv3.Client, error) {
	if len(endpoints) == 0 {
		return nil, fmt.Errorf("%w: no node is serving", errNoLeader)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, Logger: zap.NewNop()})
	if err != nil {
		return nil, fmt.Errorf("etcdtest: client for %v: %w", endpoints, err)
	}
	return cli, nil
}
