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
// them, while the client joins (or rejoins). The client must not panic or
// hang, and its session must end with ErrRegistryLost once the connection
// closes.
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
	// A rejoin: the reply with the new run's epoch, replayed events, the
	// replies to the restore and the resume.
	f.Add(concatFrames(f,
		&message{Kind: kindReply, ID: 1, Member: &me, Heartbeat: int64(time.Second), MaxFrame: 4096,
			Epoch: 77, Flags: flagRestartable},
		&message{Kind: kindReply, ID: 2},
		&message{Kind: kindEvent, Event: &Event{Seq: 9, Type: Joined, Member: Identifier{Pool: "fz", ID: "4"}}},
		&message{Kind: kindEvent, Event: &Event{Seq: 10, Type: Died, Member: Identifier{Pool: "fz", ID: "2"}}},
		&message{Kind: kindReply, ID: 3},
		&message{Kind: kindEvent, Event: &Event{Seq: 11, Type: Joined, Member: Identifier{Pool: "fz", ID: "5"}}},
	))
	f.Add(concatFrames(f, &message{Kind: kindReply, ID: 1, Code: codeRecovering, Error: "wait"}))
	f.Add(concatFrames(f, &message{Kind: kindEvent, Event: &Event{Seq: 1, Type: RegistryLost, Member: me}}))

	f.Fuzz(func(t *testing.T, data []byte) {
		srvEnd, cliEnd := net.Pipe()
		c, s := newTestClient(cliEnd, defaultClientConfig())
		var wg sync.WaitGroup
		wg.Go(func() { _, _ = io.Copy(io.Discard, srvEnd) })
		joined := make(chan error, 1)
		go func() {
			ctx := context.Background()
			rep, err := c.callOn(ctx, s, &message{Kind: kindJoin, Version: ProtocolVersion, Pool: "fz"})
			if err == nil {
				err = c.acceptJoin(s, rep, true)
			}
			// Then as a rejoin would go on: a restore and a resume.
			for _, m := range append(c.restoreMessages(), c.resumeMessage()) {
				if err != nil {
					break
				}
				_, err = c.callOn(ctx, s, m)
			}
			joined <- err
		}()
		_, _ = srvEnd.Write(data)
		_ = srvEnd.Close()
		<-s.done
		<-joined
		c.shutdown(ErrClosed)
		wg.Wait()
		if !errors.Is(s.err, ErrRegistryLost) {
			t.Fatalf("session ended with %v, want ErrRegistryLost", s.err)
		}
		_ = c.Members()
	})
}
