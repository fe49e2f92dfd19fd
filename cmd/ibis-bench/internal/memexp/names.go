package memexp

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/ibisgo/ibis/serialization"
)

// Elem is an element type of the slices the experiments convert and
// serialize.
type Elem int

// The element types. ElemByte only takes part in the serialization
// experiment: a byte needs no conversion.
const (
	ElemByte Elem = iota
	ElemInt16
	ElemInt32
	ElemInt64
	ElemFloat32
	ElemFloat64
)

var elemNames = [...]string{"byte", "int16", "int32", "int64", "float32", "float64"}
var elemSizes = [...]int{1, 2, 4, 8, 4, 8}

func (e Elem) valid() bool { return e >= ElemByte && e <= ElemFloat64 }

// String returns the Go name of the element type ("int32").
func (e Elem) String() string {
	if !e.valid() {
		return fmt.Sprintf("Elem(%d)", int(e))
	}
	return elemNames[e]
}

// MarshalText gives JSON output the element type's name.
func (e Elem) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// Size returns the size of one element in bytes (0 for an invalid Elem).
func (e Elem) Size() int {
	if !e.valid() {
		return 0
	}
	return elemSizes[e]
}

// ParseElem turns a Go type name ("int32", "float64", "byte" or "uint8")
// into an Elem.
func ParseElem(name string) (Elem, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "uint8" {
		return ElemByte, nil
	}
	for i, s := range elemNames {
		if s == n {
			return Elem(i), nil
		}
	}
	return 0, fmt.Errorf("%w: element type %q, want one of %s", ErrInvalid, name, strings.Join(elemNames[:], ", "))
}

// Order is the byte order a case sends in, relative to this machine.
type Order int

const (
	// OrderNative is this machine's byte order: no swapping anywhere.
	OrderNative Order = iota
	// OrderSwapped is the other byte order: every element is swapped when
	// written and again when read, as between machines of different
	// endianness.
	OrderSwapped
)

// String returns "native" or "swapped".
func (o Order) String() string {
	switch o {
	case OrderNative:
		return "native"
	case OrderSwapped:
		return "swapped"
	}
	return fmt.Sprintf("Order(%d)", int(o))
}

// MarshalText gives JSON output the order's name.
func (o Order) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

func (o Order) valid() bool { return o == OrderNative || o == OrderSwapped }

// ByteOrder returns the concrete byte order: the machine's own for
// OrderNative, the other one for OrderSwapped.
func (o Order) ByteOrder() binary.ByteOrder {
	native := serialization.NativeOrder()
	if o == OrderNative {
		return native
	}
	if native == binary.ByteOrder(binary.LittleEndian) {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// Method is a way of converting typed slices to bytes and back.
type Method int

const (
	// MethodLoop converts one element at a time through a
	// binary.ByteOrder: the "simple conversion" of Ibis, the baseline.
	MethodLoop Method = iota
	// MethodView converts through a byte view of the slice: one memory
	// copy in native order, a word-wise byte swap otherwise (what the
	// Writer does for slices in small packets).
	MethodView
	// MethodStream is what the data serialization actually does: a
	// serialization.Writer writing the slice as one message to an
	// in-memory sink, and a serialization.Reader reading it back from
	// memory. Large slices go as bulk packets straight from the caller's
	// memory (no conversion in native order).
	MethodStream
)

var methodNames = [...]string{"loop", "view", "stream"}

// String returns "loop", "view" or "stream".
func (m Method) String() string {
	if m < MethodLoop || m > MethodStream {
		return fmt.Sprintf("Method(%d)", int(m))
	}
	return methodNames[m]
}

// MarshalText gives JSON output the method's name.
func (m Method) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

func (m Method) valid() bool { return m >= MethodLoop && m <= MethodStream }

// ParseMethod turns "loop", "view" or "stream" into a Method.
func ParseMethod(name string) (Method, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for i, s := range methodNames {
		if s == n {
			return Method(i), nil
		}
	}
	return 0, fmt.Errorf("%w: conversion method %q, want loop, view or stream", ErrInvalid, name)
}

// Direction says whether a case writes (typed values to bytes) or reads
// (bytes to typed values).
type Direction int

const (
	// Write turns typed values into bytes (serializes, encodes).
	Write Direction = iota
	// Read turns bytes into typed values (deserializes, decodes).
	Read
)

// String returns "write" or "read".
func (d Direction) String() string {
	switch d {
	case Write:
		return "write"
	case Read:
		return "read"
	}
	return fmt.Sprintf("Direction(%d)", int(d))
}

// MarshalText gives JSON output the direction's name.
func (d Direction) MarshalText() ([]byte, error) { return []byte(d.String()), nil }
