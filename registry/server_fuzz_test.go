package registry

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

func mustFrame(tb testing.TB, m *message) []byte {
	tb.Helper()
	f, err := encodeFrame(m)
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

func concatFrames(tb testing.TB, ms ...*message) []byte {
	var out []byte
	for _, m := range ms {
		out = append(out, mustFrame(tb, m)...)
	}
	return out
}

// withHello puts the pool check's hello for the open pool "fz" before the
// frames of a seed.
func withHello(frames []byte) []byte { return append(helloBytes("fz"), frames...) }

// FuzzServerConn feeds arbitrary bytes to a server connection as if a
// client sent them (the seeds pass the pool check of the open pool first). The server must not panic or hang, must close the
// connection in the end, and must leave no trace of it: no member, no pool,
// no waiting request.
func FuzzServerConn(f *testing.F) {
	join := &message{Kind: kindJoin, ID: 1, Version: ProtocolVersion, Pool: "fz", PoolSize: 1, Address: "a", Tag: "t"}
	f.Add(withHello(concatFrames(f, join,
		&message{Kind: kindElect, ID: 2, Name: "e"},
		&message{Kind: kindElectionResult, ID: 3, Name: "e"},
		&message{Kind: kindElectionResult, ID: 4, Name: "other"},
		&message{Kind: kindLookup, ID: 5, Name: "n"},
		&message{Kind: kindBind, ID: 6, Name: "n", Port: "p"},
		&message{Kind: kindLookup, ID: 7, Name: "waits"},
		&message{Kind: kindCancel, ID: 7},
		&message{Kind: kindSignal, ID: 8, Name: "s"},
		&message{Kind: kindSignal, ID: 9, Name: "s", Targets: []string{"0", "7"}},
		&message{Kind: kindSequence, ID: 10, Name: "q"},
		&message{Kind: kindUnbind, ID: 11, Name: "n"},
		&message{Kind: kindHeartbeat},
		&message{Kind: kindTerminate, ID: 12},
		&message{Kind: kindLeave, ID: 13},
		&message{Kind: kindSequence, ID: 14, Name: "q"},
	)))
	f.Add(withHello(concatFrames(f, join, &message{Kind: kindLookup, ID: 2, Name: "x"})))
	// A member of a previous run rebuilds its pool alone, then works in it;
	// and one that waits for a member who never comes.
	me := Identifier{Pool: "fz", ID: "3", Address: "a"}
	rejoin := &message{Kind: kindJoin, ID: 1, Version: ProtocolVersion, Pool: "fz", PoolSize: 1, Rejoin: &me, Epoch: 5}
	f.Add(withHello(concatFrames(f, rejoin,
		&message{Kind: kindSequence, ID: 2, Name: "q"},
		&message{Kind: kindRestore, ID: 3, Members: []Identifier{me}, Won: []string{"e"},
			Bound: []boundName{{"n", "p"}}, Seqs: []sequenceMark{{"q", 4}}},
		&message{Kind: kindResume, ID: 4, LastSeq: 9, NextNum: 5, JoinSeq: 2,
			Flags: flagSawClosed | flagSawTerminated, Member: &me},
		&message{Kind: kindElect, ID: 5, Name: "e"},
		&message{Kind: kindLookup, ID: 6, Name: "n"},
		&message{Kind: kindSequence, ID: 7, Name: "q"},
		&message{Kind: kindRestore, ID: 8},
		&message{Kind: kindLeave, ID: 9},
	)))
	f.Add(withHello(concatFrames(f, rejoin,
		&message{Kind: kindRestore, ID: 2, Members: []Identifier{me, {Pool: "fz", ID: "4"}}},
		&message{Kind: kindResume, ID: 3, LastSeq: 1},
		&message{Kind: kindHeartbeat},
	)))
	f.Add(withHello(concatFrames(f, &message{Kind: kindJoin, ID: 1, Version: 7, Pool: "fz"})))
	f.Add(withHello(append(mustFrame(f, join), 0, 0, 0, 9, 0x81)))
	f.Add(append(mustFrame(f, join), 0, 0, 0, 9, 0x81)) // no pool check
	f.Add([]byte("GET / HTTP/1.0\r\n\r\n"))

	f.Fuzz(func(t *testing.T, data []byte) {
		s := NewServer(WithMaxFrameSize(MinMaxFrameSize))
		defer s.Close()
		srvEnd, cliEnd := net.Pipe()
		s.startConn(srvEnd)
		var wg sync.WaitGroup
		wg.Go(func() { _, _ = io.Copy(io.Discard, cliEnd) })
		_, _ = cliEnd.Write(data)
		_ = cliEnd.Close()
		wg.Wait()

		// The connection is dropped first, then what it held (its member dies, its
		// pool ends): wait for both, however slowly they come.
		deadline := time.Now().Add(10 * time.Second)
		for st := s.Stats(); st.Connections != 0 || st.Members != 0 || st.Pools != 0 || st.Waiting != 0; st = s.Stats() {
			if time.Now().After(deadline) {
				if st.Connections != 0 {
					t.Fatal("server never dropped the connection")
				}
				t.Fatalf("connection left state behind: %v", st)
			}
			time.Sleep(100 * time.Microsecond)
		}
		if n := s.unjoinedConns(); n != 0 {
			t.Fatalf("connection left %d unjoined behind", n)
		}
	})
}
