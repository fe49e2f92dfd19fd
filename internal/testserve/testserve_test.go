package testserve

import (
	"io"
	"net"
	"testing"
)

// Serve hands each connection to serve: an echo answers what it is sent, to two
// clients at once.
func TestServeEchoes(t *testing.T) {
	addr := Serve(t, func(c net.Conn) { _, _ = io.Copy(c, c) })
	for _, msg := range []string{"one", "two"} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, msg); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(c, got); err != nil || string(got) != msg {
			t.Fatalf("echo of %q: %q, %v", msg, got, err)
		}
	}
}
