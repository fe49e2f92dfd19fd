package registry

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/ibisgo/ibis/internal/testserve"
)

// A plain endpoint that answers in another protocol is named as no etcd client port;
// one that hangs up or says nothing is reported, not blamed (a stopped etcd, or one
// without quorum, is silent too); one that answers an HTTP/2 client with its settings,
// as etcd does, adds nothing. (A front end pointed at another service used to say only
// "context deadline exceeded", every few seconds.)
func TestProbePlainTellsNoEtcd(t *testing.T) {
	readPreface := func(c net.Conn) bool {
		_, err := io.ReadFull(c, make([]byte, len(http2Preface)))
		return err == nil
	}
	for _, c := range []struct {
		name  string
		serve func(net.Conn)
		want  string // "" for no blame
	}{
		{"HTTP/1", func(c net.Conn) {
			if readPreface(c) {
				_, _ = io.WriteString(c, "HTTP/1.0 400 Bad Request\r\n\r\n")
			}
			_ = c.Close()
		}, `is no etcd client port: it answered an HTTP/2 client with "HTTP/1.0 "`},
		{"hangs up", func(c net.Conn) { _ = c.Close() }, "closed the connection of an HTTP/2 client (an etcd shutting down, or no"},
		{"silent", func(c net.Conn) { _, _ = io.Copy(io.Discard, c) }, "did not answer an HTTP/2 client within 2s (an etcd that is stopped"},
		{"HTTP/2", func(c net.Conn) {
			if readPreface(c) {
				_, _ = io.WriteString(c, "\x00\x00\x00\x04\x00\x00\x00\x00\x00")
			}
			_, _ = io.Copy(io.Discard, c)
		}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ep := testserve.Serve(t, c.serve)
			err := probeEndpoint(context.Background(), "http://"+ep, nil)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("an HTTP/2 server blamed: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), ep)):
				t.Fatalf("probe: %v; want it to name %s and say %q", err, ep, c.want)
			}
		})
	}
}

// A probe ends when its context is cancelled (a front end closing), not at its
// deadline: the old code waited out a silent endpoint's 2 s, and then failed with the
// deadline's error, which a cancelled probe never does.
func TestProbeEndsWithItsContext(t *testing.T) {
	asked := make(chan struct{}, 1) // the probe has sent its preface: it reads the answer
	ep := testserve.Serve(t, func(c net.Conn) {
		if _, err := io.ReadFull(c, make([]byte, len(http2Preface))); err == nil {
			asked <- struct{}{}
		}
		_, _ = io.Copy(io.Discard, c)
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- probeEndpoint(ctx, "http://"+ep, nil) }()
	<-asked
	cancel()
	if err := <-done; err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a cancelled probe: %v; want it ended by the cancellation, not its deadline", err)
	}
}
