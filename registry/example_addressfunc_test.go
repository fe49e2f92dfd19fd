package registry_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"time"

	"github.com/ibisgo/ibis/registry"
)

// A member listening on all its interfaces publishes the address it reached the
// registry from, with its own port: here the registry is on loopback, so that address
// is loopback too.
func ExampleWithAddressFunc() {
	srv, err := registry.StartEmbedded("127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	const port = "4000" // where this member would accept connections
	c, err := registry.Join(ctx, srv.Addr(), "demo", registry.WithAddressFunc(func(local net.Addr) string {
		host, _, _ := net.SplitHostPort(local.String())
		return net.JoinHostPort(host, port)
	}))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fmt.Println(c.Identity().Address)
	// Output: 127.0.0.1:4000
}
