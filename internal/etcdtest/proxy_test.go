package etcdtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// isDeadline reports whether err is a request's deadline running out.
func isDeadline(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded
}

// getWithin does one Get of key with timeout d.
func getWithin(t *testing.T, cliGet func(ctx context.Context) error, d time.Duration) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return cliGet(ctx)
}

func TestProxyCutHangsResetClosesHealRestores(t *testing.T) {
	srv := StartEmbedded(t)
	p := NewProxy(t, srv.Endpoints()[0])
	cli := newClient(t, []string{p.Addr()})
	get := func(ctx context.Context) error {
		_, err := cli.Get(ctx, "k")
		return err
	}
	// eventually retries one-second Gets until one succeeds: the client may be
	// waiting out its reconnect backoff after Reset.
	eventually := func(what string) {
		t.Helper()
		deadline := time.Now().Add(waitFor)
		for {
			err := getWithin(t, get, time.Second)
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: no Get succeeded within %v: %v", what, waitFor, err)
			}
		}
	}
	eventually("through the open proxy")

	p.Cut()
	start := time.Now()
	// A partition makes requests hang until their deadline; another error would
	// mean that the connection was closed, which is Reset's job.
	if err := getWithin(t, get, time.Second); !isDeadline(err) {
		t.Fatalf("Get through a cut proxy: %v, want it to hang until its deadline", err)
	}
	t.Logf("cut: Get timed out after %v", time.Since(start))

	p.Heal()
	eventually("after Heal of a Cut")

	p.Reset()
	start = time.Now()
	err := getWithin(t, get, time.Second)
	if err == nil {
		t.Fatal("Get through a reset proxy succeeded")
	}
	t.Logf("reset: Get failed after %v: %v", time.Since(start), err)
	p.Heal()
	start = time.Now()
	eventually("after Heal of a Reset")
	t.Logf("reset: the client read again %v after Heal", time.Since(start))
}
