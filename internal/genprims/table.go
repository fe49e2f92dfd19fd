package main

// prim is one typed primitive of the messages: the one table that ipl's
// WriteMessage/ReadMessage, core's forwarding methods and serialization's
// readers and writers are generated from or checked against.
type prim struct {
	Name string // method suffix: WriteName, ReadName
	Go   string // Go type
	What string // the value in error messages and docs: "an int8"

	// Serialization's encoding. Custom types (string) are written by hand
	// there; the rest are fixed-size values in one section of the packet.
	Custom  bool
	AnyKind bool   // allowed in every Kind, not only data and object
	Elem    string // elemCode of arrays and object tags ("" for none)
	Sec     string // packet section
	Size    int    // bytes on the wire
	Put     string // statements storing v into b
	Get     string // statements returning the value held in b
	WDoc    string // doc comment of the Writer method, after its name
	RDoc    string // doc comment of the Reader method, after its name
}

// prims lists the primitives in ipl's order.
var prims = []prim{
	{Name: "Bool", Go: "bool", What: "a bool", Elem: "eBool", Sec: "secI8", Size: 1,
		Put:  "b[0] = 0\nif v {\nb[0] = 1\n}",
		Get:  "switch b[0] {\ncase 0:\nreturn false, nil\ncase 1:\nreturn true, nil\n}\nreturn true, corruptf(\"a bool is encoded as 0 or 1, got %d\", b[0])",
		WDoc: "writes a bool as one byte, 0 or 1.",
		RDoc: "reads a bool. A byte other than 0 or 1 is reported as ErrCorrupt\n(the stream's framing is intact; Finish still works)."},
	{Name: "Byte", Go: "byte", What: "a byte", AnyKind: true, Elem: "eUint8", Sec: "secI8", Size: 1,
		Put:  "b[0] = v",
		Get:  "return b[0], nil",
		WDoc: "writes one byte. Every kind allows it.",
		RDoc: "reads one byte. Every kind allows it."},
	{Name: "Int8", Go: "int8", What: "an int8", Elem: "eInt8", Sec: "secI8", Size: 1,
		Put: "b[0] = byte(v)",
		Get: "return int8(b[0]), nil"},
	{Name: "Int16", Go: "int16", What: "an int16", Elem: "eInt16", Sec: "secI16", Size: 2,
		Put: "w.put16(b, uint16(v))",
		Get: "return int16(r.get16(b)), nil"},
	{Name: "Uint16", Go: "uint16", What: "a uint16", Elem: "eUint16", Sec: "secI16", Size: 2,
		Put: "w.put16(b, v)",
		Get: "return r.get16(b), nil"},
	{Name: "Int32", Go: "int32", What: "an int32", Elem: "eInt32", Sec: "secI32", Size: 4,
		Put: "w.put32(b, uint32(v))",
		Get: "return int32(r.get32(b)), nil"},
	{Name: "Uint32", Go: "uint32", What: "a uint32", Elem: "eUint32", Sec: "secI32", Size: 4,
		Put: "w.put32(b, v)",
		Get: "return r.get32(b), nil"},
	{Name: "Int64", Go: "int64", What: "an int64", Elem: "eInt64", Sec: "secI64", Size: 8,
		Put: "w.put64(b, uint64(v))",
		Get: "return int64(r.get64(b)), nil"},
	{Name: "Uint64", Go: "uint64", What: "a uint64", Elem: "eUint64", Sec: "secI64", Size: 8,
		Put: "w.put64(b, v)",
		Get: "return r.get64(b), nil"},
	{Name: "Int", Go: "int", What: "an int", Elem: "eInt", Sec: "secI64", Size: 8,
		Put:  "w.put64(b, uint64(int64(v)))",
		Get:  "v := int64(r.get64(b))\nif int64(int(v)) != v {\nreturn 0, fmt.Errorf(\"%w: int value %d does not fit in a %d-bit int\", ErrTooLarge, v, bits.UintSize)\n}\nreturn int(v), nil",
		WDoc: "writes an int as 64 bits, whatever the size of int here, so that\nmachines of different word sizes interoperate.",
		RDoc: "reads an int (sent as 64 bits). On a 32-bit machine a value that\ndoes not fit is reported as ErrTooLarge."},
	{Name: "Uint", Go: "uint", What: "a uint", Elem: "eUint", Sec: "secI64", Size: 8,
		Put:  "w.put64(b, uint64(v))",
		Get:  "v := r.get64(b)\nif uint64(uint(v)) != v {\nreturn 0, fmt.Errorf(\"%w: uint value %d does not fit in a %d-bit uint\", ErrTooLarge, v, bits.UintSize)\n}\nreturn uint(v), nil",
		WDoc: "writes a uint as 64 bits (see WriteInt).",
		RDoc: "reads a uint (sent as 64 bits). On a 32-bit machine a value that\ndoes not fit is reported as ErrTooLarge."},
	{Name: "Float32", Go: "float32", What: "a float32", Elem: "eFloat32", Sec: "secF32", Size: 4,
		Put:  "w.put32(b, math.Float32bits(v))",
		Get:  "return math.Float32frombits(r.get32(b)), nil",
		WDoc: "writes a float32 (its IEEE 754 bits, NaN payloads included)."},
	{Name: "Float64", Go: "float64", What: "a float64", Elem: "eFloat64", Sec: "secF64", Size: 8,
		Put:  "w.put64(b, math.Float64bits(v))",
		Get:  "return math.Float64frombits(r.get64(b)), nil",
		WDoc: "writes a float64 (its IEEE 754 bits, NaN payloads included)."},
	{Name: "String", Go: "string", What: "a string", Custom: true},
}
