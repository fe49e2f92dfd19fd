package conformance

import (
	"fmt"
	"sort"
)

const fifoMessages = 400

// Several senders into one many-to-one port: every message arrives, each sender's in
// the order sent, with its sequence numbers 0, 1, 2, ...
var _ = register(&testCase{
	name:     "manytoone-fifo",
	children: 3,
	parent: func(e *Env) {
		t := e.T
		rp, err := e.Ibis.CreateReceivePort(e.Ctx, ManyToOne, "gather")
		if err != nil {
			t.Fatal(err)
		}
		defer rp.Close()
		next := map[string]int64{}
		for range len(e.Children) * fifoMessages {
			m, err := rp.Receive(e.Ctx)
			if err != nil {
				t.Fatalf("receive: %v", err)
			}
			from := m.Origin().String()
			idx, err1 := m.ReadInt32()
			k, err2 := m.ReadInt64()
			big := make([]int64, 2048)
			err3 := m.ReadArray(big)
			if _, err := m.Finish(); err != nil || err1 != nil || err2 != nil || err3 != nil {
				t.Fatalf("reading from %s: %v %v %v %v", from, err, err1, err2, err3)
			}
			if k != next[from] || m.SequenceNumber() != k {
				t.Fatalf("from %s (child %d): got message %d (sequence number %d), want %d", from, idx, k, m.SequenceNumber(), next[from])
			}
			if big[0] != k || big[2047] != k+int64(idx) {
				t.Fatalf("from %s: array content wrong", from)
			}
			next[from] = k + 1
		}
		if len(next) != len(e.Children) {
			t.Errorf("heard from %d senders, want %d", len(next), len(e.Children))
		}
		conns, err := rp.NewConnections()
		if err != nil || len(conns) != len(e.Children) {
			t.Errorf("NewConnections = %v, %v; want %d", conns, err, len(e.Children))
		}
		got := rp.ConnectedTo()
		sort.Slice(got, func(i, j int) bool { return got[i].String() < got[j].String() })
		for _, sp := range got {
			if !isChild(e, sp.Ibis) {
				t.Errorf("connected to unknown %v", sp)
			}
		}
	},
	child: func(e *Env) error {
		sp, err := e.Ibis.CreateSendPort(ManyToOne, "scatter")
		if err != nil {
			return err
		}
		defer sp.Close()
		if err := sp.Connect(e.Ctx, e.Parent, "gather"); err != nil {
			return err
		}
		big := make([]int64, 2048)
		for k := range int64(fifoMessages) {
			m, err := sp.NewMessage(e.Ctx)
			if err != nil {
				return err
			}
			if m.SequenceNumber() != k {
				return fmt.Errorf("sequence number %d, want %d", m.SequenceNumber(), k)
			}
			big[0], big[2047] = k, k+int64(e.Index)
			if err := m.WriteInt32(int32(e.Index)); err != nil {
				return err
			}
			if err := m.WriteInt64(k); err != nil {
				return err
			}
			if err := m.WriteArray(big); err != nil {
				return err
			}
			if _, err := m.Finish(); err != nil {
				return err
			}
		}
		return nil
	},
})
