package tlsconf_test

import (
	"crypto/tls"
	"io"
	"net"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/tlsconf"
)

// connPair connects two TCP sockets over 127.0.0.1, with TLS (this package's
// configurations: TLS 1.3, mutual certificates) when secure.
func connPair(b *testing.B, secure bool) (w, r net.Conn) {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	s := <-accepted
	b.Cleanup(func() { _ = c.Close(); _ = s.Close() })
	if !secure {
		return c, s
	}
	f, err := tlsconf.Generate(b.TempDir(), time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	scfg, err := f.Server()
	if err != nil {
		b.Fatal(err)
	}
	ccfg, err := f.Client()
	if err != nil {
		b.Fatal(err)
	}
	ts, tc := tls.Server(s, scfg), tls.Client(c, ccfg)
	done := make(chan error, 1)
	go func() { done <- ts.Handshake() }()
	if err := tc.Handshake(); err != nil {
		b.Fatal(err)
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	return tc, ts
}

// BenchmarkStream is the baseline of TLS's cost on data connections (docs/SECURITY.md):
// 1 MiB writes from one goroutine to another over 127.0.0.1, plain TCP against Go's
// crypto/tls with this package's configurations, without any Ibis in between.
func BenchmarkStream(b *testing.B) {
	for _, secure := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "tls"}[secure]
		b.Run(name, func(b *testing.B) {
			w, r := connPair(b, secure)
			buf := make([]byte, 1<<20)
			read := make(chan error, 1)
			go func() {
				in := make([]byte, 1<<20)
				for range b.N {
					if _, err := io.ReadFull(r, in); err != nil {
						read <- err
						return
					}
				}
				read <- nil
			}()
			b.SetBytes(int64(len(buf)))
			b.ResetTimer()
			for range b.N {
				if _, err := w.Write(buf); err != nil {
					b.Fatal(err)
				}
			}
			if err := <-read; err != nil {
				b.Fatal(err)
			}
		})
	}
}
