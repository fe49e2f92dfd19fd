package conformance

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/ibisgo/ibis/ipl"
)

// A serialization.byte port moves bytes and refuses typed values with ErrUnsupported;
// an object port moves what data ports cannot.
var _ = register(&testCase{
	name:     "byte-serialization",
	children: 1,
	parent: func(e *Env) {
		t := e.T
		rp, err := e.Ibis.CreateReceivePort(e.Ctx, Bytes, "raw")
		if err != nil {
			t.Fatal(err)
		}
		defer rp.Close()
		m, err := rp.Receive(e.Ctx)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := m.ReadByte()
		buf := make([]byte, 100000)
		err = m.ReadArray(buf)
		if _, ferr := m.Finish(); err != nil || ferr != nil {
			t.Fatalf("reading bytes: %v %v", err, ferr)
		}
		if b != 42 || !bytes.Equal(buf, pattern(100000)) {
			t.Errorf("bytes differ")
		}
	},
	child: func(e *Env) error {
		return sendOne(e, Bytes, e.Parent, "raw", func(m ipl.WriteMessage) error {
			if err := m.WriteInt32(1); !errors.Is(err, ipl.ErrUnsupported) {
				return fmt.Errorf("WriteInt32 on a byte port: %v, want ErrUnsupported", err)
			}
			if err := m.WriteObject("x"); !errors.Is(err, ipl.ErrUnsupported) {
				return fmt.Errorf("WriteObject on a byte port: %v, want ErrUnsupported", err)
			}
			if err := m.WriteByte(42); err != nil {
				return err
			}
			return m.WriteArray(pattern(100000))
		})
	},
})

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}
