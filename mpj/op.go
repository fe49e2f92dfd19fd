package mpj

import (
	"fmt"

	"github.com/ibisgo/ibis/ipl"
)

// Op is a reduction operator for Reduce and Allreduce (MPI_Op). Every operator is
// commutative and mpj applies it in a fixed order (by rank, the lower rank's operand
// first), so a floating-point result does not depend on timing: it is the same on
// every rank and in every run with the same number of processes.
type Op uint8

// The predefined operators. Sum, Prod, Max and Min apply to every numeric type; LAnd,
// LOr and LXor to []bool; BAnd, BOr and BXor to the integer types. Max and Min of
// floating-point values are Go's max and min: a NaN anywhere gives NaN.
const (
	Sum Op = iota + 1
	Prod
	Max
	Min
	LAnd
	LOr
	LXor
	BAnd
	BOr
	BXor
)

var opNames = [...]string{"invalid", "Sum", "Prod", "Max", "Min", "LAnd", "LOr", "LXor", "BAnd", "BOr", "BXor"}

// String returns the operator's name ("Sum", ...).
func (o Op) String() string {
	if int(o) >= len(opNames) {
		return fmt.Sprintf("Op(%d)", uint8(o))
	}
	return opNames[o]
}

// appliesTo says whether o is defined on elements of type d; collectives check it on
// every rank before any message moves, so a bad pairing fails everywhere at once.
func (o Op) appliesTo(d Datatype) error {
	ok := false
	switch {
	case o >= Sum && o <= Min:
		ok = d != Bool
	case o >= LAnd && o <= LXor:
		ok = d == Bool
	case o >= BAnd && o <= BXor:
		ok = d != Bool && d != Float32 && d != Float64
	}
	if !ok {
		return fmt.Errorf("%w: mpj: the operator %s does not apply to %s", ipl.ErrTypeMismatch, o, d)
	}
	return nil
}

type integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~int | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uint
}

type number interface {
	integer | ~float32 | ~float64
}

// arith sets d[i] = a[i] o b[i] for the arithmetic operators.
func arith[T number](o Op, d, a, b []T) {
	switch o {
	case Sum:
		for i := range d {
			d[i] = a[i] + b[i]
		}
	case Prod:
		for i := range d {
			d[i] = a[i] * b[i]
		}
	case Max:
		for i := range d {
			d[i] = max(a[i], b[i])
		}
	case Min:
		for i := range d {
			d[i] = min(a[i], b[i])
		}
	}
}

// integral sets d[i] = a[i] o b[i] for an integer type: arithmetic or bitwise.
func integral[T integer](o Op, d, a, b []T) {
	switch o {
	case BAnd:
		for i := range d {
			d[i] = a[i] & b[i]
		}
	case BOr:
		for i := range d {
			d[i] = a[i] | b[i]
		}
	case BXor:
		for i := range d {
			d[i] = a[i] ^ b[i]
		}
	default:
		arith(o, d, a, b)
	}
}

func logical(o Op, d, a, b []bool) {
	for i := range d {
		switch o {
		case LAnd:
			d[i] = a[i] && b[i]
		case LOr:
			d[i] = a[i] || b[i]
		case LXor:
			d[i] = a[i] != b[i]
		}
	}
}

// combine sets dst = a o b elementwise; the three are buffers of one type and length
// (dst may be a or b), and o.appliesTo their type has been checked.
func combine(o Op, dst, a, b any) {
	switch d := dst.(type) {
	case []bool:
		logical(o, d, a.([]bool), b.([]bool))
	case []byte:
		integral(o, d, a.([]byte), b.([]byte))
	case []int8:
		integral(o, d, a.([]int8), b.([]int8))
	case []int16:
		integral(o, d, a.([]int16), b.([]int16))
	case []uint16:
		integral(o, d, a.([]uint16), b.([]uint16))
	case []int32:
		integral(o, d, a.([]int32), b.([]int32))
	case []uint32:
		integral(o, d, a.([]uint32), b.([]uint32))
	case []int64:
		integral(o, d, a.([]int64), b.([]int64))
	case []uint64:
		integral(o, d, a.([]uint64), b.([]uint64))
	case []int:
		integral(o, d, a.([]int), b.([]int))
	case []uint:
		integral(o, d, a.([]uint), b.([]uint))
	case []float32:
		arith(o, d, a.([]float32), b.([]float32))
	case []float64:
		arith(o, d, a.([]float64), b.([]float64))
	}
}
