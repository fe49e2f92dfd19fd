// Package testserve runs a TCP server on 127.0.0.1 for a test: each connection is
// handed to a function the test gives (an echo, a silent peer, a peer that speaks
// another protocol), and everything is closed and waited for when the test ends, so
// that goroutine leak checks see nothing left.
package testserve

import (
	"net"
	"sync"
	"testing"
)

// Serve listens on a port of 127.0.0.1 that the kernel picks and runs serve on each
// connection, in a goroutine of its own, until the test ends; the connection is closed
// after serve returns. It returns the address. At the test's end the listener and every
// connection are closed and Serve waits for the serve calls to return.
func Serve(t testing.TB, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() {
				defer c.Close()
				serve(c)
			})
		}
	})
	return ln.Addr().String()
}
