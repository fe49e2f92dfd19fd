// Command ibis-bench is the message-passing micro-benchmark suite of Ibis-Go: one
// subcommand per experiment (pingpong, throughput, conversion, serialization,
// arrays2d, masterworker, connect, manytoone, latency, registry-join, ...), each
// printing tables and optionally writing JSON and plots. Every Ibis implementation linked in (tcp, nio)
// can be chosen with -impl, the nio flavours with -nio-send and -nio-receive.
//
// Experiments that need more than one process start their peers themselves: the
// binary re-executes itself with the subcommand's arguments in its environment, and
// every process joins a pool around a registry the first one embeds. Given a registry
// (-registry, or IBIS_REGISTRY as ibis-run sets it) the processes of that pool play
// the parts instead, so the same experiment runs across machines.
//
//	ibis-bench pingpong -plot pingpong.png   latency to pingpong.png, bandwidth to pingpong-2.png
//	ibis-run -np 2 -- ibis-bench pingpong
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	args := os.Args[1:]
	if peer, ok := peerArgs(); ok {
		args = peer
	}
	code := run(ctx, args, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
