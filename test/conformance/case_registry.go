package conformance

import (
	"fmt"
	"sort"
)

const sequenceDraws = 10

// Elections agree across processes, and pool-wide sequence numbers are unique.
var _ = register(&testCase{
	name:     "registry-services",
	children: 3,
	parent: func(e *Env) {
		t := e.T
		rp, err := e.Ibis.CreateReceivePort(e.Ctx, ManyToOne, "votes")
		if err != nil {
			t.Fatal(err)
		}
		defer rp.Close()
		winner, err := e.Ibis.Registry().Elect(e.Ctx, "leader")
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int64]bool{}
		for range sequenceDraws {
			n, err := e.Ibis.Registry().Sequence(e.Ctx, "seq")
			if err != nil {
				t.Fatal(err)
			}
			seen[n] = true
		}
		for range e.Children {
			m, err := rp.Receive(e.Ctx)
			if err != nil {
				t.Fatal(err)
			}
			w, _ := m.ReadString()
			nums := make([]int64, sequenceDraws)
			if err := m.ReadArray(nums); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Finish(); err != nil {
				t.Fatal(err)
			}
			if w != winner.String() {
				t.Errorf("%v saw winner %s, parent saw %s", m.Origin(), w, winner)
			}
			for _, n := range nums {
				if seen[n] {
					t.Errorf("sequence number %d handed out twice", n)
				}
				seen[n] = true
			}
		}
		var all []int64
		for n := range seen {
			all = append(all, n)
		}
		sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
		for i, n := range all {
			if n != int64(i) {
				t.Errorf("sequence numbers %v are not 0..%d", all, len(all)-1)
				break
			}
		}
		if got := e.Ibis.Registry().PoolSize(); got != len(e.Children)+1 {
			t.Errorf("PoolSize = %d", got)
		}
		if got := len(e.Ibis.Registry().Members()); got != len(e.Children)+1 {
			t.Errorf("Members has %d entries", got)
		}
		if err := e.Ibis.Registry().Signal(e.Ctx, "bye", e.Children...); err != nil {
			t.Fatal(err)
		}
	},
	child: func(e *Env) error {
		winner, err := e.Ibis.Registry().Elect(e.Ctx, "leader")
		if err != nil {
			return err
		}
		again, err := e.Ibis.Registry().ElectionResult(e.Ctx, "leader")
		if err != nil || again != winner {
			return fmt.Errorf("ElectionResult = %v, %v; Elect gave %v", again, err, winner)
		}
		nums := make([]int64, sequenceDraws)
		for i := range nums {
			if nums[i], err = e.Ibis.Registry().Sequence(e.Ctx, "seq"); err != nil {
				return err
			}
		}
		sp, err := e.Ibis.CreateSendPort(ManyToOne, "")
		if err != nil {
			return err
		}
		defer sp.Close()
		if err := sp.Connect(e.Ctx, e.Parent, "votes"); err != nil {
			return err
		}
		m, err := sp.NewMessage(e.Ctx)
		if err != nil {
			return err
		}
		if err := m.WriteString(winner.String()); err != nil {
			return err
		}
		if err := m.WriteArray(nums); err != nil {
			return err
		}
		if _, err = m.Finish(); err != nil {
			return err
		}
		return waitSignal(e, "bye") // stay a member until the parent has counted
	},
})
