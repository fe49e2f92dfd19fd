// Command squat holds a TCP port as some other program on a cluster node might: it listens
// on -host at a port the kernel picks, prints "squatting on HOST:PORT", and accepts
// connections but never says a word on them, until it is stopped (SIGTERM) or -for passes.
// TestSrunRegistryFailures puts it on the port rank 0 must serve the registry on.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	host := flag.String("host", "", "address to listen on")
	bound := flag.Duration("for", 10*time.Minute, "stop after this long at most")
	flag.Parse()
	ln, err := net.Listen("tcp", net.JoinHostPort(*host, "0"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "squat:", err)
		os.Exit(1)
	}
	fmt.Println("squatting on", ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *bound)
	defer cancel()
	go func() {
		<-ctx.Done()
		_ = ln.Close()
	}()
	var held []net.Conn // kept open and silent
	for {
		c, err := ln.Accept()
		if err != nil {
			break
		}
		held = append(held, c)
	}
	for _, c := range held {
		_ = c.Close()
	}
}
