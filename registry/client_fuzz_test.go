package registry

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// FuzzClientConn feeds arbitrary bytes to a client as if the server sent
// them, while the client joins. The client must not panic or hang, and it
// must end with ErrRegistryLost once the connection closes.
func FuzzClientConn(f *testing.F) {
	me := Identifier{Pool: "fz", ID: "0", Address: "a"}
	f.Add(concatFrames(f,
		&message{Kind: kindEvent, Event: &Event{Seq: 1, Type: Joined, Member: me}},
		&message{Kind: kindReply, ID: 1, Member: &me, Heartbeat: int64(time.Second), MaxFrame: 4096, PoolSize: 1},
		&message{Kind: kindEvent, Event: &Event{Seq: 2, Type: PoolClosed, Member: me}},
		&message{Kind: kindPing},
		&message{Kind: kindEvent, Event: &Event{Seq: 3, Type: Signal, Member: me, Name: "s"}},
		&message{Kind: kindEvent, Event: &Event{Seq: 4, Type: Terminated, Member: me}},
		&message{Kind: kindEvent, Event: &Event{Seq: 5, Type: Died, Member: me}},
	))
	f.Add(concatFrames(f, &message{Kind: kindReply, ID: 1, Code: codeVersion, Error: "old"}))
	f.Add(concatFrames(f, &message{Kind: kindReply, ID: 1, Member: &me, Heartbeat: 1, MaxFrame: 1}))
	f.Add(concatFrames(f, &message{Kind: kindJoin, ID: 1}))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})

	f.Fuzz(func(t *testing.T, data []byte) {
		srvEnd, cliEnd := net.Pipe()
		c := newClient(cliEnd, defaultClientConfig())
		c.start()
		var wg sync.WaitGroup
		wg.Go(func() { _, _ = io.Copy(io.Discard, srvEnd) })
		joined := make(chan error, 1)
		go func() {
			rep, err := c.call(context.Background(), &message{Kind: kindJoin, Version: ProtocolVersion, Pool: "fz"})
			if err == nil {
				err = c.acceptJoin(rep)
			}
			joined <- err
		}()
		_, _ = srvEnd.Write(data)
		_ = srvEnd.Close()
		<-c.Done()
		<-joined
		c.shutdown(ErrClosed)
		wg.Wait()
		if !errors.Is(c.Err(), ErrRegistryLost) {
			t.Fatalf("client ended with %v, want ErrRegistryLost", c.Err())
		}
		_ = c.Members()
	})
}
