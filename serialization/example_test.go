package serialization

import (
	"bytes"
	"fmt"
)

// ExampleWriter sends one message through an in-memory sink and reads it
// back, as a transport does over a connection.
func ExampleWriter() {
	var wire bytes.Buffer
	w := NewWriter(KindObject, NewStreamSink(&wire))
	_ = w.WriteInt32(42)
	_ = w.WriteString("temperature")
	_ = w.WriteArray([]float64{20.5, 21, 19.75})
	_ = w.WriteObject(map[string]int{"rank": 3})
	n, err := w.Finish()
	fmt.Println("sent", n, "bytes, error:", err)

	r := NewReader(KindObject, &wire)
	if err := r.Next(); err != nil {
		fmt.Println(err)
		return
	}
	id, _ := r.ReadInt32()
	name, _ := r.ReadString()
	temps := make([]float64, 3) // the reader supplies the slice to fill
	_ = r.ReadArray(temps)
	var meta map[string]int
	_ = r.ReadObject(&meta)
	_ = r.Finish()
	fmt.Println(id, name, temps, meta["rank"], r.Count())
	// Output:
	// sent 96 bytes, error: <nil>
	// 42 temperature [20.5 21 19.75] 3 96
}

// Body is a particle of an N-body code; Near points into the same slice of bodies, so
// the codec sends each body once and keeps the references.
type Body struct {
	Pos, Vel [3]float64
	Mass     float64
	Near     *Body
}

// ExampleRegister sends linked structs with WriteObject: the object codec keeps the
// shared pointer and the cycle, and a receiver reads them into *any once the type is
// registered (into a *[]*Body it needs no registration).
func ExampleRegister() {
	a := &Body{Mass: 1}
	b := &Body{Mass: 2, Near: a}
	a.Near = b // a cycle
	var wire bytes.Buffer
	w := NewWriter(KindObject, NewStreamSink(&wire))
	_ = w.WriteObject([]*Body{a, b, a})
	_, _ = w.Finish()

	if err := Register([]*Body{}); err != nil {
		fmt.Println(err)
		return
	}
	r := NewReader(KindObject, &wire)
	_ = r.Next()
	var got any
	err := r.ReadObject(&got)
	_ = r.Finish()
	bodies := got.([]*Body)
	fmt.Println(err, len(bodies), bodies[0] == bodies[2], bodies[0].Near == bodies[1], bodies[1].Near.Mass)
	// Output:
	// <nil> 3 true true 1
}
