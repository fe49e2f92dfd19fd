package etcdtest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// benchValue is the size of a registry op as the store will write it.
var benchValue = strings.Repeat("x", 200)

// benchServers are the etcd set-ups the benchmarks compare: Debian's etcd-server
// with fsync (as in production) on 1 and 3 nodes, and the embedded server the unit
// tests use, with and without fsync.
var benchServers = []struct {
	name  string
	start func(b *testing.B) []string
}{
	{"debian-1node", func(b *testing.B) []string { return StartCluster(b, 1).Endpoints() }},
	{"debian-3nodes", func(b *testing.B) []string { return StartCluster(b, 3).Endpoints() }},
	{"embedded-fsync", func(b *testing.B) []string { return Embedded(b, WithFsync(true)) }},
	{"embedded-nofsync", func(b *testing.B) []string { return Embedded(b) }},
}

// BenchmarkPut measures one Put at a time: the latency of a single write.
func BenchmarkPut(b *testing.B) {
	for _, s := range benchServers {
		b.Run(s.name, func(b *testing.B) {
			cli := newClient(b, s.start(b))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			b.ResetTimer()
			for i := range b.N {
				if _, err := cli.Put(ctx, fmt.Sprintf("/bench/%d", i), benchValue); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPut1000Concurrent measures 1,000 Puts issued at once from one client
// (a pool of 1,000 members joining); one op is all 1,000.
func BenchmarkPut1000Concurrent(b *testing.B) {
	const puts = 1000
	for _, s := range benchServers {
		b.Run(s.name, func(b *testing.B) {
			cli := newClient(b, s.start(b))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			b.ResetTimer()
			for i := range b.N {
				var wg sync.WaitGroup
				errs := make(chan error, puts)
				for j := range puts {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if _, err := cli.Put(ctx, fmt.Sprintf("/bench/%d/%d", i, j), benchValue); err != nil {
							errs <- err
						}
					}()
				}
				wg.Wait()
				close(errs)
				if err := <-errs; err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
