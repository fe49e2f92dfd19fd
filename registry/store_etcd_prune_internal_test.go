package registry

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/etcdtest"
)

// A pool's ops are deleted only if every one of them was created by the
// revision given: a pool of the same name begun since keeps them all.
func TestPruneSparesAPoolBegunAgain(t *testing.T) {
	eps := etcdtest.Embedded(t)
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
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
	if pool, ok := opKeyPool(opKey(join, 7, 1)); !ok || pool != "p/q" {
		t.Fatalf("opKeyPool: %q, %v", pool, ok)
	}
	if _, ok := opKeyPool(opKey(&op{kind: opFrontGone}, 7, 1)); ok {
		t.Fatal("a front end's op read as a pool's")
	}
}
