// Package metrics serves a registry server's statistics over HTTP in the Prometheus text
// exposition format (version 0.0.4), for the -metrics flag of cmd/ibis-registry and
// cmd/ibis-run: a monitoring system scrapes GET /metrics; a person can read it with curl.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/ibisgo/ibis/registry"
)

// metric is one line of the exposition: its name, help, type and value in a snapshot.
type metric struct {
	name, help, kind string
	value            func(registry.Stats) float64
}

var registryMetrics = []metric{
	{"ibis_registry_pools", "Pools with at least one member.", "gauge", func(s registry.Stats) float64 { return float64(s.Pools) }},
	{"ibis_registry_members", "Members over all pools.", "gauge", func(s registry.Stats) float64 { return float64(s.Members) }},
	{"ibis_registry_connections", "Open client connections, joined or not.", "gauge", func(s registry.Stats) float64 { return float64(s.Connections) }},
	{"ibis_registry_waiting_requests", "Requests waiting for an answer (ElectionResult, Lookup).", "gauge", func(s registry.Stats) float64 { return float64(s.Waiting) }},
	{"ibis_registry_recovering_pools", "Pools being rebuilt by their members after a restart.", "gauge", func(s registry.Stats) float64 { return float64(s.Recovering) }},
	{"ibis_registry_events_total", "Pool events emitted.", "counter", func(s registry.Stats) float64 { return float64(s.Events) }},
	{"ibis_registry_joins_total", "Successful joins.", "counter", func(s registry.Stats) float64 { return float64(s.Joins) }},
	{"ibis_registry_leaves_total", "Clean leaves.", "counter", func(s registry.Stats) float64 { return float64(s.Leaves) }},
	{"ibis_registry_deaths_total", "Members declared dead.", "counter", func(s registry.Stats) float64 { return float64(s.Deaths) }},
	{"ibis_registry_rejoins_total", "Members of a previous run that came back.", "counter", func(s registry.Stats) float64 { return float64(s.Rejoins) }},
	{"ibis_registry_accepted_connections_total", "Connections accepted.", "counter", func(s registry.Stats) float64 { return float64(s.Accepted) }},
	{"ibis_registry_refused_connections_total", "Connections refused in the TLS or pool handshake.", "counter", func(s registry.Stats) float64 { return float64(s.Refused) }},
	{"ibis_registry_received_bytes_total", "Bytes read from clients.", "counter", func(s registry.Stats) float64 { return float64(s.BytesIn) }},
	{"ibis_registry_sent_bytes_total", "Bytes written to clients.", "counter", func(s registry.Stats) float64 { return float64(s.BytesOut) }},
}

// WriteRegistry writes a snapshot of a registry server's statistics in the Prometheus text
// format.
func WriteRegistry(w io.Writer, st registry.Stats) error {
	for _, m := range registryMetrics {
		if _, err := fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n%s %g\n", m.name, m.help, m.name, m.kind, m.name, m.value(st)); err != nil {
			return err
		}
	}
	return nil
}

// Handler serves the statistics stats returns at GET /metrics.
func Handler(stats func() registry.Stats) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_ = WriteRegistry(w, stats())
	})
	return mux
}

// Server is a running metrics endpoint.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan error
}

// Serve listens on addr (host:port; port 0 picks one) and serves Handler(stats) until
// Close. Listening errors are returned at once, so that a wrong -metrics flag is told.
func Serve(addr string, stats func() registry.Stats) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen on %s: %w", addr, err)
	}
	s := &Server{srv: &http.Server{Handler: Handler(stats), ReadHeaderTimeout: 10 * time.Second}, ln: ln, done: make(chan error, 1)}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// Addr is where the endpoint listens.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the endpoint and waits for it.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}
