package registry_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/ibisgo/ibis/registry"
)

// Example runs a registry in-process and a closed-world pool of two members
// that wait for each other, elect a master, draw work numbers and publish a
// port name.
func Example() {
	srv, err := registry.StartEmbedded("127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	a, err := registry.Join(ctx, srv.Addr(), "demo", registry.WithPoolSize(2), registry.WithTag("alpha"))
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	b, err := registry.Join(ctx, srv.Addr(), "demo", registry.WithPoolSize(2), registry.WithTag("beta"))
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()

	if err := a.WaitUntilPoolClosed(ctx); err != nil {
		log.Fatal(err)
	}
	for _, m := range a.Members() {
		fmt.Println("member", m.ID, m.Tag)
	}

	master, err := a.Elect(ctx, "master")
	if err != nil {
		log.Fatal(err)
	}
	same, err := b.Elect(ctx, "master")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("master:", master.Tag, "agreed:", master == same)

	for _, c := range []*registry.Client{a, b, a} {
		n, err := c.Sequence(ctx, "work")
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("work item", n)
	}

	if err := b.Bind(ctx, "results", "collector"); err != nil {
		log.Fatal(err)
	}
	owner, port, err := a.Lookup(ctx, "results")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("results at", owner.Tag, port)

	// Output:
	// member 0 alpha
	// member 1 beta
	// master: alpha agreed: true
	// work item 0
	// work item 1
	// work item 2
	// results at beta collector
}
