package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestWithDeadline(t *testing.T) {
	err := withDeadline(context.Background(), "waiting", 10*time.Millisecond, func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	})
	if err == nil || !strings.Contains(err.Error(), "waiting did not finish within 10ms") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("overrun: %v", err)
	}
	boom := errors.New("boom")
	if err := withDeadline(context.Background(), "x", time.Minute, func(context.Context) error { return boom }); err != boom {
		t.Fatalf("a step's own error: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := withDeadline(ctx, "x", time.Minute, func(ctx context.Context) error { return ctx.Err() }); err != context.Canceled {
		t.Fatalf("the caller's end: %v", err)
	}
}
