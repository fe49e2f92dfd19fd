//go:build linux

package registryha

import (
	"context"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// frontsPrefix is where each registry front end keeps a key under its etcd lease
// (etcdFronts in registry/store_etcd.go). The tests read it to see a front end's
// lease end: then its members that did not move are declared dead, which is the
// moment a test about deaths must look past.
const frontsPrefix = "/ibis/registry/fronts/"

// waitFronts waits until etcd holds exactly want front-end keys: the front ends
// whose leases live.
func waitFronts(t *testing.T, endpoints []string, want int) {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatalf("etcd client: %v", err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	var last error
	for {
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		resp, err := cli.Get(cctx, frontsPrefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
		ccancel()
		switch {
		case err != nil:
			last = err
		case len(resp.Kvs) == want:
			return
		default:
			last = fmt.Errorf("%d front-end keys", len(resp.Kvs))
		}
		select {
		case <-ctx.Done():
			t.Fatalf("etcd never held %d front-end keys under %s within %v (last: %v)", want, frontsPrefix, testTimeout, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
