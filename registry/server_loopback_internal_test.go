package registry

import (
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// Members that publish loopback addresses from different source addresses get one
// warning per pool; loopback from one source, or real addresses, get none.
func TestLoopbackWarningOncePerPool(t *testing.T) {
	obs, logs := observer.New(zap.WarnLevel)
	s := &Server{log: zap.New(obs)}
	p1, p2 := &pool{name: "p1"}, &pool{name: "p2"}
	join := func(p *pool, addr, source string) {
		s.noteLoopback(p, &member{id: Identifier{Pool: p.name, Address: addr}, source: source})
	}
	join(p1, "127.0.0.1:4000", "10.77.0.2")
	join(p1, "127.0.0.1:4001", "10.77.0.2") // the same host: fine
	join(p1, "10.77.0.3:4000", "10.77.0.3") // not loopback
	join(p1, "garbage,,:", "10.77.0.4")     // out of shape: not judged
	join(p2, "[::1]:4000,bad", "10.77.0.2") // another pool
	if n := logs.Len(); n != 0 {
		t.Fatalf("%d warnings before any cause: %v", n, logs.All())
	}
	join(p1, "127.0.0.1:4000", "10.77.0.3")
	join(p1, "127.0.0.1:4000", "10.77.0.4")
	if n := logs.FilterMessageSnippet("loopback").Len(); n != 1 {
		t.Fatalf("%d warnings for pool p1, want 1: %v", n, logs.All())
	}
	join(p2, "127.0.0.1:4000", "10.77.0.5")
	if n := logs.FilterField(zap.String("pool", "p2")).Len(); n != 1 {
		t.Fatalf("%d warnings for pool p2, want 1", n)
	}
}
