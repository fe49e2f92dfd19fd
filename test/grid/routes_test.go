package grid_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/internal/tlsconf"
	"github.com/ibisgo/ibis/ipl"
)

// routeHosts are where the route checker's peers run: every host, so that each pair of
// sites is crossed both ways and each site holds two peers.
var routeHosts = []string{"h1", "h2", "h3", "h4", "h5", "h6"}

// wantRoute is the route a connection from a host of site from to one of site to takes:
// direct within a site and into the open site 1, reversed from site 1 into a closed site
// (the closed side dials out at the registry's request), relayed through the hub between
// the firewalled and the NATed site (neither can dial the other).
func wantRoute(from, to int) string {
	switch {
	case from == to || to == 1:
		return "direct"
	case from == 1:
		return "reversed"
	default:
		return "relayed"
	}
}

// testRoutes runs the route checker's peers on routeHosts, with env besides the pool's
// (registry, pool, size, implementation and hub), and checks that every message arrived
// whole and that each send port's connection took wantRoute.
func testRoutes(t *testing.T, g *grid, impl, registry, hub string, env ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), roleBound+time.Minute)
	defer cancel()
	pool := poolName("routes")
	var peers []*selfexec.Child
	for _, h := range routeHosts {
		penv := append([]string{envRole + "=peer", ipl.EnvRegistry + "=" + registry, ipl.EnvPool + "=" + pool,
			ipl.EnvPoolSize + "=" + strconv.Itoa(len(routeHosts)), ipl.EnvImpl + "=" + impl, ipl.EnvHub + "=" + hub}, env...)
		c, err := selfexec.Start(ctx, []string{selfexec.NoTests}, selfexec.WithoutEnv("IBIS_"),
			selfexec.WithEnv(penv...), on(t, g.c, h))
		if err != nil {
			t.Fatalf("starting the peer on %s: %v", h, err)
		}
		t.Cleanup(c.Close)
		peers = append(peers, c)
	}
	var out strings.Builder
	for i, c := range peers {
		select {
		case <-c.Done():
		case <-ctx.Done():
		}
		if err := c.Wait(); err != nil || ctx.Err() != nil {
			t.Fatalf("the peer on %s: %v %v\n%s", routeHosts[i], err, ctx.Err(), c.Output())
		}
		out.WriteString(c.Stdout())
	}
	checkRoutes(t, g, out.String())
}

// checkRoutes checks the peers' output: one message received on every ordered pair of
// hosts, and one route line per pair with the route wantRoute gives.
func checkRoutes(t *testing.T, g *grid, out string) {
	t.Helper()
	routes, received := map[string]string{}, map[string]int{}
	for _, l := range strings.Split(out, "\n") {
		f := keyed(l)
		switch {
		case strings.HasPrefix(l, "received "):
			received[f["from"]]++
		case strings.HasPrefix(l, "route "):
			route := "direct"
			switch {
			case f["made"] != "1":
				route = "made=" + f["made"]
			case f["reversed"] == "1" && f["relayed"] == "0":
				route = "reversed"
			case f["relayed"] == "1" && f["reversed"] == "0":
				route = "relayed"
			case f["reversed"] != "0" || f["relayed"] != "0":
				route = fmt.Sprintf("reversed=%s relayed=%s", f["reversed"], f["relayed"])
			}
			routes[f["from"]+">"+f["to"]] = route
		}
	}
	var table strings.Builder
	for _, a := range routeHosts {
		if n := received[a]; n != len(routeHosts)-1 {
			t.Errorf("%d messages from %s arrived, want %d", n, a, len(routeHosts)-1)
		}
		for _, b := range routeHosts {
			if a == b {
				continue
			}
			sa, sb := siteOf(t, g.c, a), siteOf(t, g.c, b)
			got, want := routes[a+">"+b], wantRoute(sa, sb)
			fmt.Fprintf(&table, "  %s (site %d) -> %s (site %d): %s\n", a, sa, b, sb, got)
			if got != want {
				t.Errorf("%s (site %d) to %s (site %d): route %q, want %q", a, sa, b, sb, got, want)
			}
		}
	}
	t.Logf("routes:\n%s", table.String())
	if t.Failed() {
		t.Logf("the peers' output:\n%s", out)
	}
}

// keyed parses the k=v fields of a line.
func keyed(line string) map[string]string {
	out := map[string]string{}
	for _, f := range strings.Fields(line) {
		if k, v, ok := strings.Cut(f, "="); ok {
			out[k] = v
		}
	}
	return out
}

// testRoutesTLS runs the route checker in a pool with TLS and a pool secret: a registry
// that holds both, and a hub of its own that holds only the secret (it admits the pool's
// members, and relays their TLS records without the keys to read them).
func testRoutesTLS(t *testing.T, g *grid, impl string) {
	dir := t.TempDir()
	files, err := tlsconf.Generate(dir, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "pool-secret")
	if err := os.WriteFile(secret, []byte("grid routes secret "+strconv.FormatInt(time.Now().UnixNano(), 36)), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), upBound)
	defer cancel()
	h1 := host(t, g.c, "h1").Addr
	registry := startServer(ctx, t, g.c, "h1", binary(t, "./cmd/ibis-registry"), "ibis-registry listening on ", nil,
		"-host", h1, "-port", "0", "-secret-file", secret, "-tls-cert", files.Cert, "-tls-key", files.Key, "-tls-ca", files.CA)
	hub := startServer(ctx, t, g.c, "h1", binary(t, "./cmd/ibis-hub"), "ibis-hub listening on ", nil,
		"-listen", h1+":0", "-secret-file", secret)
	testRoutes(t, g, impl, registry, hub, ipl.EnvPoolSecretFile+"="+secret,
		ipl.EnvTLSCert+"="+files.Cert, ipl.EnvTLSKey+"="+files.Key, ipl.EnvTLSCA+"="+files.CA)
}
