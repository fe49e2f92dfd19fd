package etcdtest

import (
	"context"
	"testing"
	"time"
)

// waitFor is the generous deadline for anything a test waits for.
const waitFor = 60 * time.Second

func TestClusterKillLeaderWritesGoOn(t *testing.T) {
	start := time.Now()
	c := StartCluster(t, 3)
	t.Logf("3-node cluster serving after %v", time.Since(start))

	cli := newClient(t, c.Endpoints())
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if _, err := cli.Put(ctx, "before", "1"); err != nil {
		t.Fatalf("put before the kill: %v", err)
	}
	leader, err := c.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Kill(leader); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	elected := make(chan time.Duration, 1)
	go func() {
		if _, err := c.Leader(ctx); err == nil {
			elected <- time.Since(killed)
		}
		close(elected)
	}()
	// The first write after the kill may fail while the others elect a leader;
	// the client then writes again, as a store must.
	var attempts int
	for {
		attempts++
		put := time.Now()
		_, err := cli.Put(ctx, "after", "2")
		t.Logf("put %d after killing leader node%d: %v in %v", attempts, leader, err, time.Since(put))
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no write succeeded within %v of killing the leader", waitFor)
		}
	}
	t.Logf("first successful write %v after the leader's SIGKILL, %d attempts", time.Since(killed), attempts)
	if d, ok := <-elected; ok {
		t.Logf("the other nodes agreed on a new leader %v after the SIGKILL", d)
	}

	newLeader, err := c.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if newLeader == leader {
		t.Fatalf("killed node%d is still the leader", leader)
	}
	r, err := cli.Get(ctx, "before")
	if err != nil || len(r.Kvs) != 1 || string(r.Kvs[0].Value) != "1" {
		t.Fatalf("get before = %v, %v; want value 1", r, err)
	}

	if err := c.Restart(leader); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestClusterStopAllStartAllKeepsData(t *testing.T) {
	c := StartCluster(t, 3)
	cli := newClient(t, c.Endpoints())
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if _, err := cli.Put(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}

	if err := c.StopAll(); err != nil {
		t.Fatal(err)
	}
	short, cancelShort := context.WithTimeout(ctx, time.Second)
	_, err := cli.Get(short, "k")
	cancelShort()
	if err == nil {
		t.Fatal("get with every node down succeeded")
	}

	if err := c.StartAll(); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	if err := c.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("cluster serving %v after StartAll", time.Since(started))
	// The client that saw every node go keeps reconnecting on its own.
	for {
		r, err := cli.Get(ctx, "k")
		if err == nil {
			if len(r.Kvs) != 1 || string(r.Kvs[0].Value) != "v" {
				t.Fatalf("get k after restart = %v, want v", r.Kvs)
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("old client: no read within %v of StartAll: %v", waitFor, err)
		}
	}
	t.Logf("old client read the data %v after StartAll", time.Since(started))
}
