package mpj

import (
	"errors"
	"fmt"
	"sync"

	"github.com/ibisgo/ibis/ipl"
)

// Op is a reduction operator for Reduce, Allreduce, Scan, Exscan and Reduce_scatter
// (MPI_Op): a predefined one, or one NewOp made from a Go function. mpj applies every
// operator in an order fixed by the ranks, never by arrival (and for an operator that
// is not commutative, in rank order: a0 o a1 o ... o a(p-1)), so a floating-point
// result does not depend on timing: it is the same in every run with the same number
// of processes, and Allreduce's is the same on every rank.
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
	// MaxLoc and MinLoc (MPI_MAXLOC, MPI_MINLOC) apply to buffers of (value, index)
	// pairs stored flat in one numeric slice, as MPI's MPI_2INT and
	// MPI_2DOUBLE_PRECISION: element 2i is a value, element 2i+1 its index (a rank, a
	// position; any number stored in the buffer's type). The result pair holds the
	// largest (smallest) value and its index; of equal values, the smaller index, as
	// in MPI. The buffer's length must be even; counts (Reduce_scatter's) are in
	// elements and must be even too.
	MaxLoc
	MinLoc
)

var opNames = [...]string{"invalid", "Sum", "Prod", "Max", "Min", "LAnd", "LOr", "LXor", "BAnd", "BOr", "BXor",
	"MaxLoc", "MinLoc"}

// String returns the operator's name ("Sum", ..., "user op 130" for one NewOp made).
func (o Op) String() string {
	if o >= firstUserOp {
		return fmt.Sprintf("user op %d", uint8(o))
	}
	if int(o) >= len(opNames) {
		return fmt.Sprintf("Op(%d)", uint8(o))
	}
	return opNames[o]
}

// pairs says whether o works on (value, index) pairs: buffers of even length, split
// only between pairs.
func (o Op) pairs() bool { return o == MaxLoc || o == MinLoc }

// commutative says whether o's operands may be combined in any order.
func (o Op) commutative() bool {
	if u := lookupOp(o); u != nil {
		return u.commute
	}
	return true
}

// appliesTo says whether o is defined on elements of type d; collectives check it on
// every rank before any message moves, so a bad pairing fails everywhere at once. An
// operator on a type it does not take is ErrTypeMismatch; an Op that is no operator at
// all (Op(0), a number between the predefined ones and NewOp's, a user op freed or never
// made) is ipl.ErrInvalidArgument, as in MPI, where an invalid handle is MPI_ERR_OP.
func (o Op) appliesTo(d Datatype) error {
	ok := false
	switch {
	case o >= Sum && o <= Min:
		ok = d != Bool
	case o >= LAnd && o <= LXor:
		ok = d == Bool
	case o >= BAnd && o <= BXor:
		ok = d != Bool && d != Float32 && d != Float64
	case o == MaxLoc || o == MinLoc:
		ok = d != Bool
	case o >= firstUserOp:
		u := lookupOp(o)
		if u == nil {
			return fmt.Errorf("%w: mpj: %s was freed or never made", ipl.ErrInvalidArgument, o)
		}
		ok = u.dt == d
	default:
		return fmt.Errorf("%w: mpj: Op(%d) is neither a predefined operator nor one NewOp made",
			ipl.ErrInvalidArgument, uint8(o))
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

// loc sets the pairs of d to the MaxLoc (max) or MinLoc pairs of a and b.
func loc[T number](isMax bool, d, a, b []T) {
	for i := 0; i+1 < len(d); i += 2 {
		av, ai, bv, bi := a[i], a[i+1], b[i], b[i+1]
		switch {
		case av == bv:
			d[i], d[i+1] = av, min(ai, bi)
		case (av > bv) == isMax:
			d[i], d[i+1] = av, ai
		default:
			d[i], d[i+1] = bv, bi
		}
	}
}

// combine sets dst = a o b elementwise; the three are buffers of one type and length
// (dst may be a or b), and o.appliesTo their type has been checked.
func combine(o Op, dst, a, b any) {
	if o >= firstUserOp {
		lookupOp(o).fn(dst, a, b)
		return
	}
	if o.pairs() {
		combineLoc(o == MaxLoc, dst, a, b)
		return
	}
	switch d := dst.(type) {
	case []bool:
		logical(o, d, a.([]bool), b.([]bool))
	case []byte:
		if !bytewise(o, d, a.([]byte), b.([]byte)) {
			integral(o, d, a.([]byte), b.([]byte))
		}
	case []int8:
		if !bytewise(o, int8Bytes(d), int8Bytes(a.([]int8)), int8Bytes(b.([]int8))) {
			integral(o, d, a.([]int8), b.([]int8))
		}
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

func combineLoc(isMax bool, dst, a, b any) {
	switch d := dst.(type) {
	case []byte:
		loc(isMax, d, a.([]byte), b.([]byte))
	case []int8:
		loc(isMax, d, a.([]int8), b.([]int8))
	case []int16:
		loc(isMax, d, a.([]int16), b.([]int16))
	case []uint16:
		loc(isMax, d, a.([]uint16), b.([]uint16))
	case []int32:
		loc(isMax, d, a.([]int32), b.([]int32))
	case []uint32:
		loc(isMax, d, a.([]uint32), b.([]uint32))
	case []int64:
		loc(isMax, d, a.([]int64), b.([]int64))
	case []uint64:
		loc(isMax, d, a.([]uint64), b.([]uint64))
	case []int:
		loc(isMax, d, a.([]int), b.([]int))
	case []uint:
		loc(isMax, d, a.([]uint), b.([]uint))
	case []float32:
		loc(isMax, d, a.([]float32), b.([]float32))
	case []float64:
		loc(isMax, d, a.([]float64), b.([]float64))
	}
}

// Element is the element types of mpj's buffers, for NewOp.
type Element interface {
	bool | byte | int8 | int16 | uint16 | int32 | uint32 | int64 | uint64 | int | uint | float32 | float64
}

// firstUserOp is the first Op number NewOp hands out; there are at most
// 256 - firstUserOp user operators at a time.
const firstUserOp = 128

// userOp is an operator made by NewOp.
type userOp struct {
	dt      Datatype
	commute bool
	fn      func(dst, a, b any)
}

var userOps struct {
	mu  sync.RWMutex
	ops [256 - firstUserOp]*userOp
}

func lookupOp(o Op) *userOp {
	if o < firstUserOp {
		return nil
	}
	userOps.mu.RLock()
	defer userOps.mu.RUnlock()
	return userOps.ops[o-firstUserOp]
}

// ErrTooManyOps: NewOp has no free operator number; Free the ones no longer used.
var ErrTooManyOps = errors.New("mpj: too many user operators (Free some)")

// NewOp makes a reduction operator from a Go function (MPI_Op_create) on buffers of
// []T: f(a, b) is a o b, where a comes from the lower ranks. It must be associative;
// commutative says whether it is commutative too. mpj applies it in rank order,
// a0 o a1 o ... o a(p-1), whichever it is (bracketed as the algorithm's tree says, in
// an order fixed by the ranks), so a non-commutative operator gives MPI's result, and
// a commutative one (which MPI may apply in any order) gets the same guarantee.
// Every process must make its operators in the same order, so that they have the
// same Op, as an MPI program creates its operators before using them. The operator
// applies to []T only (ErrTypeMismatch otherwise); Free releases it.
func NewOp[T Element](f func(a, b T) T, commutative bool) (Op, error) {
	dt, _, err := bufInfo([]T(nil))
	if err != nil {
		return 0, err
	}
	u := &userOp{dt: dt, commute: commutative, fn: func(dst, a, b any) {
		d, x, y := dst.([]T), a.([]T), b.([]T)
		for i := range d {
			d[i] = f(x[i], y[i])
		}
	}}
	userOps.mu.Lock()
	defer userOps.mu.Unlock()
	for i, o := range userOps.ops {
		if o == nil {
			userOps.ops[i] = u
			return Op(firstUserOp + i), nil
		}
	}
	return 0, ErrTooManyOps
}

// Free releases an operator made by NewOp (MPI_Op_free), so that its number can be
// handed out again; a predefined operator is not freed. Free it only when no
// collective uses it any more.
func (o Op) Free() {
	if o < firstUserOp {
		return
	}
	userOps.mu.Lock()
	userOps.ops[o-firstUserOp] = nil
	userOps.mu.Unlock()
}
