package impltest

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ibisgo/ibis/internal/tlsconf"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

// TLS checks TLS on the registry and data connections of an implementation that speaks it:
// two members with certificates of the pool's CA join and exchange a large message; a
// process with a certificate of another CA is refused (ErrUnauthenticated) and the refusal
// is logged with its address.
func TLS(t *testing.T, impl string, props map[string]string) {
	files, err := tlsconf.Generate(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	scfg, err := files.Server()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := registry.StartEmbedded("127.0.0.1:0", registry.WithServerTLS(scfg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	core, logs := observer.New(zap.WarnLevel)
	pool := []ipl.Option{ipl.WithRegistry(srv.Addr()), ipl.WithPool("tls-pool"), ipl.WithTLS(files.Cert, files.Key, files.CA)}
	a := NewIbis(t, impl, props, append(pool, ipl.WithLogger(zap.New(core)))...)
	b := NewIbis(t, impl, props, pool...)
	rp, err := a.CreateReceivePort(t.Context(), dataType, "in")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sp, err := b.CreateSendPort(dataType, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Connect(ctx, a.Identifier(), "in"); err != nil {
		t.Fatalf("a member with the pool's certificate: %v", err)
	}
	out := make([]float64, 1<<18) // 2 MiB: many TLS records
	for i := range out {
		out[i] = float64(i)
	}
	w, err := sp.NewMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteArray(out); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	m, err := rp.Receive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	in := make([]float64, len(out))
	if err := m.ReadArray(in); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Finish(); err != nil {
		t.Fatal(err)
	}
	for i := range in {
		if in[i] != out[i] {
			t.Fatalf("element %d: %v, want %v", i, in[i], out[i])
		}
	}

	// Another CA's certificate, on a raw TLS connection to a's data port.
	other, err := tlsconf.Generate(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ocfg, err := other.Client()
	if err != nil {
		t.Fatal(err)
	}
	before := logs.Len()
	raw, err := net.Dial("tcp", a.Identifier().Address)
	if err != nil {
		t.Fatal(err)
	}
	tc := tls.Client(raw, ocfg)
	_ = tc.SetDeadline(time.Now().Add(30 * time.Second))
	herr := tc.Handshake()
	if herr == nil { // TLS 1.3: the server's verdict on the client's certificate comes after
		_, herr = tc.Read(make([]byte, 1))
	}
	_ = tc.Close()
	if herr == nil {
		t.Error("a certificate of another CA was accepted")
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		found := false
		for _, e := range logs.All()[before:] {
			if e.Message == "refused a connection: TLS handshake failed" && strings.HasPrefix(e.ContextMap()["remote"].(string), "127.0.0.1:") {
				found = true
			}
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no TLS refusal with the peer's address in the log: %v", logs.All()[before:])
		}
	}
	// A process of another CA (its own pool) connecting to a's port.
	stranger := NewIbis(t, impl, props, ipl.WithTLS(other.Cert, other.Key, other.CA))
	ssp, err := stranger.CreateSendPort(dataType, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := ssp.Connect(ctx, a.Identifier(), "in"); !errors.Is(err, ipl.ErrUnauthenticated) {
		t.Errorf("connect with another CA's certificate: %v, want ErrUnauthenticated", err)
	}
}

// NoTLS checks that an implementation that cannot speak TLS refuses it with an error that
// says so and names the alternative, instead of running in the clear.
func NoTLS(t *testing.T, impl string) {
	files, err := tlsconf.Generate(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ib, err := ipl.New(ctx, ipl.WithImplementation(impl), ipl.WithPortTypes(dataType), ipl.WithTLS(files.Cert, files.Key, files.CA))
	if err == nil {
		_ = ib.Close()
		t.Fatal("TLS accepted by an implementation that cannot speak it")
	}
	if !errors.Is(err, ipl.ErrUnsupported) || !strings.Contains(err.Error(), "-impl tcp") {
		t.Errorf("%v: want ErrUnsupported naming -impl tcp", err)
	}
}
