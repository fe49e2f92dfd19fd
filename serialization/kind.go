package serialization

import (
	"fmt"
	"reflect"
)

// Kind is the serialization a port type allows. It decides which calls a
// Writer or Reader accepts; all kinds share one wire format.
type Kind int

const (
	// KindByte allows only bytes: WriteByte, WriteArray([]byte), ReadByte,
	// ReadArray([]byte). It is the cheapest kind, for raw byte streams.
	KindByte Kind = iota
	// KindData allows every primitive, strings, and primitive 1-D and 2-D
	// slices.
	KindData
	// KindObject allows everything KindData allows plus WriteObject and
	// ReadObject for arbitrary Go values.
	KindObject
)

// String returns the Ibis name of the kind ("byte", "data", "object").
func (k Kind) String() string {
	switch k {
	case KindByte:
		return "byte"
	case KindData:
		return "data"
	case KindObject:
		return "object"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// valid reports whether k is one of the defined kinds.
func (k Kind) valid() bool { return k >= KindByte && k <= KindObject }

// unsupported returns the error for a call that needs kind need while the
// stream uses k.
func (k Kind) unsupported(call string, need Kind) error {
	return fmt.Errorf("%w: %s needs %s serialization, but this stream uses %s serialization",
		ErrUnsupported, call, need, k)
}

// needData returns an error unless k allows data calls.
func (k Kind) needData(call string) error {
	if k == KindData || k == KindObject {
		return nil
	}
	return k.unsupported(call, KindData)
}

// needObject returns an error unless k allows object calls.
func (k Kind) needObject(call string) error {
	if k == KindObject {
		return nil
	}
	return k.unsupported(call, KindObject)
}

// typeName names the dynamic type of v for an error message. Unlike
// fmt's %T it does not make v escape, so callers passing a slice as an
// interface do not allocate on the success path.
func typeName(v any) string {
	if t := reflect.TypeOf(v); t != nil {
		return t.String()
	}
	return "nil"
}
