package metrics

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ibisgo/ibis/registry"
)

// The endpoint serves every statistic as HELP, TYPE and a sample line, with the values
// of the snapshot, and nothing but GET /metrics.
func TestServe(t *testing.T) {
	st := registry.Stats{Pools: 2, Members: 5, Joins: 7, Refused: 1, BytesIn: 1 << 20}
	s, err := Serve("127.0.0.1:0", func() registry.Stats { return st })
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp, err := http.Get("http://" + s.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q", ct)
	}
	samples := map[string]string{}
	types := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 4 && f[0] == "#" && f[1] == "TYPE":
			types[f[2]] = f[3]
		case len(f) == 2:
			samples[f[0]] = f[1]
		}
	}
	for name, want := range map[string]string{"ibis_registry_pools": "2", "ibis_registry_members": "5",
		"ibis_registry_joins_total": "7", "ibis_registry_refused_connections_total": "1",
		"ibis_registry_received_bytes_total": "1.048576e+06", "ibis_registry_deaths_total": "0"} {
		if samples[name] != want {
			t.Errorf("%s = %q, want %q\n%s", name, samples[name], want, body)
		}
	}
	if len(samples) != len(registryMetrics) || types["ibis_registry_pools"] != "gauge" || types["ibis_registry_joins_total"] != "counter" {
		t.Errorf("%d samples, types %v", len(samples), types)
	}
	if resp, err := http.Post("http://"+s.Addr()+"/metrics", "text/plain", nil); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("POST: %s", resp.Status)
		}
	}
	if resp, err := http.Get("http://" + s.Addr() + "/other"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET /other: %s", resp.Status)
		}
	}
}

func TestServeBadAddress(t *testing.T) {
	if _, err := Serve("nohost:notaport", func() registry.Stats { return registry.Stats{} }); err == nil ||
		!strings.Contains(err.Error(), "metrics: listen on nohost:notaport") {
		t.Errorf("err = %v", err)
	}
}
