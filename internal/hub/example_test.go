package hub_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/ibisgo/ibis/internal/hub"
	"github.com/ibisgo/ibis/internal/poolauth"
)

// A member behind a firewall registers at a hub; another member, which cannot dial it,
// reaches it through the hub. Both then own a plain TCP connection on which they would
// run their end-to-end handshake.
func Example() {
	secret := poolauth.New([]byte("the pool's secret"))
	lookup := func(pool string) (poolauth.Secret, bool) { return secret, pool == "run42" }
	srv := hub.NewServer(hub.WithSecrets(lookup))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// The closed member: it advertises no address the hub can dial back.
	closed, err := hub.Register(ctx, ln.Addr().String(), hub.Registration{Pool: "run42", Secret: secret, Key: "k-7f3a"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer closed.Close()
	fmt.Println("reachable directly:", closed.Reachable())

	// The dialling member asks the hub for a connection to the key.
	out, err := hub.Relay(ctx, ln.Addr().String(), hub.RelayRequest{Pool: "run42", Secret: secret, Key: "k-7f3a"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer out.Close()
	in := <-closed.Accepted()
	defer in.Close()

	_, _ = out.Write([]byte("hello"))
	buf := make([]byte, 5)
	_, _ = io.ReadFull(in, buf)
	fmt.Printf("relayed: %s\n", buf)
	// Output:
	// reachable directly: false
	// relayed: hello
}
