package etcdtest

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"
	"go.uber.org/zap"
)

// newClient opens a client on endpoints that the test closes at cleanup.
func newClient(t *testing.T, endpoints []string) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		t.Fatalf("client for %v: %v", endpoints, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestEmbeddedPutGetStop(t *testing.T) {
	start := time.Now()
	srv := StartEmbedded(t)
	t.Logf("embedded etcd ready in %v at %v", time.Since(start), srv.Endpoints())

	c := newClient(t, srv.Endpoints())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Put(ctx, "k", "v"); err != nil {
		t.Fatalf("put: %v", err)
	}
	r, err := c.Get(ctx, "k")
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if len(r.Kvs) != 1 || string(r.Kvs[0].Value) != "v" {
		t.Fatalf("get k = %v, want one key with value v", r.Kvs)
	}

	srv.Stop()
	short, cancelShort := context.WithTimeout(context.Background(), time.Second)
	defer cancelShort()
	if _, err := c.Get(short, "k"); err == nil {
		t.Fatal("get after Stop succeeded, want an error")
	}
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
