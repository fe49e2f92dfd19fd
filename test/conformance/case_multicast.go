package conformance

import "fmt"

const multicastMessages = 200

// A one-to-many send port: every message reaches every connected receive port, in order.
var _ = register(&testCase{
	name:     "multicast",
	children: 3,
	parent: func(e *Env) {
		t := e.T
		sp := multicastSender(e)
		defer sp.Close()
		if got := len(sp.ConnectedTo()); got != len(e.Children) {
			t.Fatalf("ConnectedTo has %d ports, want %d", got, len(e.Children))
		}
		data := make([]float64, 10000)
		for i := range multicastMessages {
			m, err := sp.NewMessage(e.Ctx)
			if err != nil {
				t.Fatal(err)
			}
			data[0] = float64(i)
			if err := m.WriteInt32(int32(i)); err != nil {
				t.Fatal(err)
			}
			if i%10 == 0 {
				if err := m.WriteArray(data); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := m.Finish(); err != nil {
				t.Fatalf("finish message %d: %v", i, err)
			}
		}
	},
	child: func(e *Env) error {
		rp, err := e.Ibis.CreateReceivePort(OneToMany, "mc")
		if err != nil {
			return err
		}
		defer rp.Close()
		data := make([]float64, 10000)
		for i := range multicastMessages {
			m, err := rp.Receive(e.Ctx)
			if err != nil {
				return err
			}
			v, err := m.ReadInt32()
			if err != nil {
				return err
			}
			if int(v) != i {
				return fmt.Errorf("message %d arrived as number %d", v, i)
			}
			if i%10 == 0 {
				if err := m.ReadArray(data); err != nil {
					return err
				}
				if data[0] != float64(i) {
					return fmt.Errorf("message %d: array holds %g", i, data[0])
				}
			}
			if _, err := m.Finish(); err != nil {
				return err
			}
		}
		return nil
	},
})
