// Command hello is the canonical Ibis-Go program: the processes of a pool elect a
// server; the server publishes a receive port under a global name and answers requests
// in upcalls; every other process connects to that name, sends requests holding a
// string and a []float64, and receives the replies on a port of its own. The server ends
// once every client has left the pool (registry events), failing if one died.
//
// Run a pool of four on this machine:
//
//	go run ./cmd/ibis-run -np 4 -- go run ./examples/hello
//
// or, built with MPI, as an MPI job of four ranks:
//
//	go build -tags mpi -o hello ./examples/hello && mpirun -np 4 ./hello -impl mp
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/ipl"

	_ "github.com/ibisgo/ibis/impl/mp"  // MPI: -impl mp under mpirun, in a build with -tags mpi
	_ "github.com/ibisgo/ibis/impl/nio" // the gnet event-loop implementation (-impl nio)
	_ "github.com/ibisgo/ibis/impl/tcp" // the TCP implementation (the default)
)

var (
	// requestType: many clients to one server port, messages as upcalls.
	requestType = ipl.MustPortType(ipl.ConnectionManyToOne, ipl.SerializationObject,
		ipl.ReceiveAutoUpcalls, ipl.CommunicationReliable, ipl.CommunicationFIFO)
	// replyType: one server send port to one client port, explicit receive.
	replyType = ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationData,
		ipl.ReceiveExplicit, ipl.ReceiveTimeout, ipl.CommunicationReliable, ipl.CommunicationFIFO)
)

func main() {
	opts := ipl.Flags(flag.CommandLine)
	n := flag.Int("n", 3, "requests per client")
	timeout := flag.Duration("timeout", 2*time.Minute, "give up after this long (0: never)")
	flag.Parse()
	switch {
	case flag.NArg() > 0:
		usageError("unexpected arguments %q", flag.Args())
	case *n < 0:
		usageError("-n %d: want a count of requests, 0 or more", *n)
	case *timeout < 0:
		usageError("-timeout %v: must not be negative", *timeout)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	if err := run(ctx, *n, opts()); err != nil {
		fmt.Fprintln(os.Stderr, "hello:", err)
		os.Exit(1)
	}
}

// usageError says what is wrong with the command line and exits 2, as the flag package
// does for the flags it refuses.
func usageError(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "hello: "+format+"\n", args...)
	flag.Usage()
	os.Exit(2)
}

func run(ctx context.Context, n int, opts []ipl.Option) error {
	gone := newDepartures()
	ib, err := ipl.New(ctx, append(opts,
		ipl.WithLogger(warnings()),
		ipl.WithPortTypes(requestType, replyType),
		ipl.WithCapabilities(ipl.ElectionsStrict, ipl.MembershipTotallyOrdered),
		// Membership news goes to stderr; stdout holds the program's results.
		ipl.WithEventHandler(func(e ipl.Event) {
			if e.Type == ipl.EventDied || e.Type == ipl.EventLeft {
				fmt.Fprintf(os.Stderr, "hello: member %s %s\n", e.Member, e.Type)
				gone.note(e)
			}
		}))...)
	if err != nil {
		return err
	}
	defer ib.Close()
	reg := ib.Registry()
	if reg.PoolSize() > 0 {
		if err := reg.WaitUntilPoolClosed(ctx); err != nil {
			return err
		}
	}
	server, err := reg.Elect(ctx, "server")
	if err != nil {
		return err
	}
	me := ib.Identifier()
	if server == me {
		return serve(ctx, ib, max(reg.PoolSize(), 1)-1, gone)
	}
	return request(ctx, ib, n)
}

// serve answers requests, each in an upcall, replying to the sender's "replies" port, until
// all clients have left the pool: a client leaves once it has its replies, however many it
// asked for. A client that died instead makes it an error.
func serve(ctx context.Context, ib ipl.Ibis, clients int, gone *departures) error {
	fmt.Printf("server %s: serving %d clients until they leave\n", ib.Identifier(), clients)
	if clients == 0 {
		fmt.Println("server: no clients in this pool; run several processes with ibis-run -np 4")
		return nil
	}
	var (
		mu      sync.Mutex
		replies = map[string]ipl.SendPort{}
		served  int
	)
	handler := func(m ipl.ReadMessage) error {
		var greeting string
		var values []float64
		if err := m.ReadObject(&greeting); err != nil {
			return err
		}
		if err := m.ReadObject(&values); err != nil {
			return err
		}
		from := m.Origin()
		if _, err := m.Finish(); err != nil { // free the port for the next request early
			return err
		}
		sum := 0.0
		for _, v := range values {
			sum += v
		}
		fmt.Printf("server: %q from %s, sum %.1f\n", greeting, from.Ibis, sum)
		mu.Lock()
		sp := replies[from.Ibis.ID]
		mu.Unlock()
		if sp == nil {
			var err error
			if sp, err = ib.CreateSendPort(replyType, "reply-to-"+from.Ibis.ID); err != nil {
				return err
			}
			if err := sp.Connect(ctx, from.Ibis, "replies"); err != nil {
				return err
			}
			mu.Lock()
			replies[from.Ibis.ID] = sp
			mu.Unlock()
		}
		// Counted before the reply goes out: the client leaves once it has its replies, and
		// the server reads the count when the last client has left, while this upcall may
		// still run (its message was finished above, so closing the port does not wait).
		mu.Lock()
		served++
		mu.Unlock()
		w, err := sp.NewMessage(ctx)
		if err != nil {
			return err
		}
		if err := w.WriteFloat64(sum); err != nil {
			return err
		}
		_, err = w.Finish()
		return err
	}
	rp, err := ib.CreateReceivePort(ctx, requestType, "requests", ipl.Global(), ipl.WithMessageHandler(handler))
	if err != nil {
		return err
	}
	defer rp.Close()
	if err := rp.EnableMessageUpcalls(); err != nil {
		return err
	}
	died, err := gone.wait(ctx, ib.Identifier(), clients)
	if err := rp.Close(); err != nil { // no more requests
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	if err != nil {
		return fmt.Errorf("served %d requests, then gave up waiting for the clients to leave: %w", served, err)
	}
	if len(died) > 0 {
		return fmt.Errorf("served %d requests; client(s) %v died", served, died)
	}
	fmt.Printf("server: served %d requests; every client has left\n", served)
	return nil
}

// request sends n requests to the server's published port and reads the replies.
func request(ctx context.Context, ib ipl.Ibis, n int) error {
	rp, err := ib.CreateReceivePort(ctx, replyType, "replies")
	if err != nil {
		return err
	}
	defer rp.Close()
	sp, err := ib.CreateSendPort(requestType, "requests")
	if err != nil {
		return err
	}
	defer sp.Close()
	if err := sp.ConnectGlobal(ctx, "requests"); err != nil {
		return err
	}
	id := ib.Identifier().Number()
	for i := range n {
		values := make([]float64, 1000)
		for j := range values {
			values[j] = float64(id + i)
		}
		m, err := sp.NewMessage(ctx)
		if err != nil {
			return err
		}
		err = errors.Join(m.WriteObject(fmt.Sprintf("hello #%d from %d", i, id)), m.WriteObject(values))
		if _, ferr := m.Finish(); err != nil || ferr != nil {
			return errors.Join(err, ferr)
		}
		r, err := rp.Receive(ctx)
		if err != nil {
			return err
		}
		sum, err := r.ReadFloat64()
		if _, ferr := r.Finish(); err != nil || ferr != nil {
			return errors.Join(err, ferr)
		}
		fmt.Printf("client (member %d): reply %d: sum %.1f (want %.1f)\n", id, i, sum, float64(1000*(id+i)))
		if sum != float64(1000*(id+i)) {
			return fmt.Errorf("reply %d: sum %.1f, want %.1f", i, sum, float64(1000*(id+i)))
		}
	}
	return nil
}

// warnings logs Ibis's warnings (a registry that is not reachable, say) on stderr, where
// they do not mix with the program's results.
func warnings() *zap.Logger {
	cfg := zap.NewDevelopmentConfig()
	cfg.Level = zap.NewAtomicLevelAt(zap.WarnLevel)
	cfg.OutputPaths = []string{"stderr"}
	cfg.DisableStacktrace = true
	l, err := cfg.Build()
	if err != nil {
		return zap.NewNop()
	}
	return l
}
