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
