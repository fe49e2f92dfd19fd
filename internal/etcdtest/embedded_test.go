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
func newClient(t testing.TB, endpoints []string) *clientv3.Client {
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

// TestEmbeddedStopBehindResetProxy is the way to take etcd away from a client with
// open streams: Reset the proxy in front of it, then Stop (which would otherwise
// wait out etcd's request timeout for the streams).
func TestEmbeddedStopBehindResetProxy(t *testing.T) {
	srv := StartEmbedded(t)
	p := NewProxy(t, srv.Endpoints()[0])
	c := newClient(t, []string{p.Addr()})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	wc := c.Watch(ctx, "w/", clientv3.WithPrefix())
	if _, err := c.Put(ctx, "w/1", "v"); err != nil {
		t.Fatalf("put: %v", err)
	}
	if r := <-wc; r.Err() != nil || len(r.Events) != 1 {
		t.Fatalf("watch: %v, %d events; want the put", r.Err(), len(r.Events))
	}

	p.Reset()
	start := time.Now()
	srv.Stop()
	t.Logf("Stop with a watch open behind a reset proxy took %v", time.Since(start))

	// With the link healed and the server gone, the proxy's own connection to it is
	// refused, and the client gets nothing.
	p.Heal()
	short, cancelShort := context.WithTimeout(ctx, time.Second)
	defer cancelShort()
	if _, err := c.Get(short, "w/1"); err == nil {
		t.Fatal("get through the proxy after Stop succeeded")
	}
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, GoleakIgnores()...)
}
