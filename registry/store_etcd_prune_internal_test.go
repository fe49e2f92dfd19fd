package registry

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/etcdtest"
)

// A pool's ops are deleted only if every one of them was created by the
// revision given: a pool of the same name begun since keeps them all.
func TestPruneSparesAPoolBegunAgain(t *testing.T) {
	cli, ctx := embeddedClient(t)
	join := &op{kind: opJoin, req: &message{Kind: kindJoin, Pool: "p/q"}}
	var revs []int64
	for i := range uint64(3) {
		resp, err := cli.Put(ctx, opKey(join, 7, i), "x")
		if err != nil {
			t.Fatal(err)
		}
		revs = append(revs, resp.Header.Revision)
	}
	other := &op{kind: opJoin, req: &message{Kind: kindJoin, Pool: "p/q2"}}
	if _, err := cli.Put(ctx, opKey(other, 7, 9), "x"); err != nil {
		t.Fatal(err)
	}
	count := func(pool string) int64 {
		resp, err := cli.Get(ctx, poolOpsPrefix(pool), clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			t.Fatal(err)
		}
		return resp.Count
	}
	p := &pruner{e: &etcdStore{log: zap.NewNop()}, cli: cli}
	p.prune(ctx, "p/q", revs[1])
	if n := count("p/q"); n != 3 {
		t.Fatalf("pruned up to the second op with a third after it: %d ops left, want 3", n)
	}
	p.prune(ctx, "p/q", revs[2])
	if n, m := count("p/q"), count("p/q2"); n != 0 || m != 1 {
		t.Fatalf("pruned up to the last op: %d ops left (want 0), the other pool %d (want 1)", n, m)
	}
	p.kept = map[string]bool{"p/q2": true}
	p.prune(ctx, "p/q2", 1<<40)
	if n := count("p/q2"); n != 1 {
		t.Fatalf("a pool kept for ops of the old layout was pruned: %d ops left, want 1", n)
	}
	if pool, ok := opKeyPool(opKey(join, 7, 1)); !ok || pool != "p/q" {
		t.Fatalf("opKeyPool: %q, %v", pool, ok)
	}
	if _, ok := opKeyPool(opKey(&op{kind: opFrontGone}, 7, 1)); ok {
		t.Fatal("a front end's op read as a pool's")
	}
}

// A pool's op under a key of the layout before pools had prefixes keeps the pool
// from pruning; one under its pool's prefix does not.
func TestOldLayoutKeepsItsPool(t *testing.T) {
	srv := NewServer()
	defer srv.Close()
	e := &etcdStore{s: srv, log: zap.NewNop()}
	pr := &pruner{kept: make(map[string]bool)}
	for _, c := range []struct {
		pool, key string
		kept      bool
	}{
		{"legacy", fmt.Sprintf("%s%016x/%d", etcdOps, 5, 1), true},
		{"fresh", "", false},
	} {
		o := &op{kind: opSignal, front: 5, conn: 1, req: &message{Kind: kindSignal, Member: &Identifier{Pool: c.pool, ID: "0"}}}
		b, err := o.encode()
		if err != nil {
			t.Fatal(err)
		}
		key := c.key
		if key == "" {
			key = opKey(o, 5, 1)
		}
		if got, _ := e.applyKV(&mvccpb.KeyValue{Key: []byte(key), Value: b}, pr); got == nil {
			t.Fatalf("%s: the op was not applied", key)
		}
		if pr.kept[c.pool] != c.kept {
			t.Errorf("%s: kept %v, want %v", key, pr.kept[c.pool], c.kept)
		}
	}
}

// Every front end reports a front end's end; only the first report is written.
func TestFrontGoneWrittenOnce(t *testing.T) {
	cli, ctx := embeddedClient(t)
	for front := uint64(1); front <= 3; front++ {
		e := &etcdStore{cli: cli, front: front, log: zap.NewNop()}
		if err := e.submit(ctx, &op{kind: opFrontGone, front: front, gone: 9, req: &message{Kind: kindLeave}}); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := cli.Get(ctx, etcdFrontOps, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Key) != frontGoneKey(9) || resp.Kvs[0].Version != 1 {
		t.Fatalf("keys %v, want one %s written once", resp.Kvs, frontGoneKey(9))
	}
	o, err := decodeOp(resp.Kvs[0].Value)
	if err != nil || o.front != 1 {
		t.Fatalf("the op written: %+v, %v; want the first report's", o, err)
	}
}

// embeddedClient returns a client of an embedded etcd server and a context for the
// test's calls; both end with the test.
func embeddedClient(t *testing.T) (*clientv3.Client, context.Context) {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: etcdtest.Embedded(t), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return cli, ctx
}
