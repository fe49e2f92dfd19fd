package memexp

import (
	"context"
	"fmt"
	"slices"

	"github.com/ibisgo/ibis/internal/byteview"
	"github.com/ibisgo/ibis/serialization"
)

// Defaults of ConversionParams: the rows of Table 6.1 of the thesis.
var (
	DefaultConversionElems = []Elem{ElemInt32, ElemInt64, ElemFloat64}
	DefaultConversionSizes = []int{64, 8 << 10, 100 << 10}
)

// ConversionParams says what the conversion experiment measures. Zero
// fields take the defaults.
type ConversionParams struct {
	// Elems are the element types (default int32, int64, float64; byte is
	// not allowed, it needs no conversion).
	Elems []Elem
	// Sizes are the slice sizes in bytes (default 64, 8 KiB, 100 KiB). A
	// size is rounded down to whole elements and must hold at least one.
	Sizes []int
	// Methods are the conversion methods (default all: loop, view, stream).
	Methods []Method
	// Orders are the byte orders (default native and swapped).
	Orders []Order
	// CopySink makes the stream writes copy every message into memory, as
	// a transport would, instead of only counting its bytes. Without it a
	// slice sent as a bulk packet in native order costs no copy at all,
	// which is what the Writer itself does.
	CopySink bool
}

// ConversionCase is the measurement of one conversion.
type ConversionCase struct {
	Elem     Elem
	Bytes    int // payload bytes per operation
	Elements int
	Method   Method
	Order    Order
	Dir      Direction
	Measurement
	// MBps is the payload throughput at the reported time, in 10^6 B/s.
	MBps float64
}

// ConversionResult is the outcome of Conversion: the parameters actually
// used (defaults filled in), how it was measured, and one case per
// element type, size, method, order and direction, in that nesting order.
type ConversionResult struct {
	Params      ConversionParams
	NativeOrder string // this machine's byte order ("LittleEndian")
	Repetitions int
	MinBatchNs  int64
	Statistic   string
	Cases       []ConversionCase
}

// Find returns the case with the given coordinates.
func (r *ConversionResult) Find(e Elem, bytes int, m Method, o Order, d Direction) (ConversionCase, bool) {
	for _, c := range r.Cases {
		if c.Elem == e && c.Bytes == bytes && c.Method == m && c.Order == o && c.Dir == d {
			return c, true
		}
	}
	return ConversionCase{}, false
}

// normalize fills in defaults and validates.
func (p ConversionParams) normalize() (ConversionParams, error) {
	if len(p.Elems) == 0 {
		p.Elems = slices.Clone(DefaultConversionElems)
	}
	if len(p.Sizes) == 0 {
		p.Sizes = slices.Clone(DefaultConversionSizes)
	}
	if len(p.Methods) == 0 {
		p.Methods = []Method{MethodLoop, MethodView, MethodStream}
	}
	if len(p.Orders) == 0 {
		p.Orders = []Order{OrderNative, OrderSwapped}
	}
	for _, e := range p.Elems {
		if !e.valid() || e == ElemByte {
			return p, fmt.Errorf("%w: conversion element type %v, want int16, int32, int64, float32 or float64", ErrInvalid, e)
		}
		for _, s := range p.Sizes {
			if s < e.Size() || s > MaxBytes {
				return p, fmt.Errorf("%w: size %d bytes for %v, want %d to %d", ErrInvalid, s, e, e.Size(), MaxBytes)
			}
		}
	}
	for _, m := range p.Methods {
		if !m.valid() {
			return p, fmt.Errorf("%w: conversion method %v", ErrInvalid, m)
		}
	}
	for _, o := range p.Orders {
		if !o.valid() {
			return p, fmt.Errorf("%w: byte order %v", ErrInvalid, o)
		}
	}
	return p, nil
}

// Conversion measures the throughput of turning typed slices into bytes
// (write) and back (read), per element type, size, method and byte order:
// Table 6.1 of the thesis, with the Writer and Reader of the data
// serialization as the third method. It returns an error wrapping
// ErrInvalid for bad parameters, ErrMismatch if a case does not round-trip,
// or the context's error if ctx ends first.
func Conversion(ctx context.Context, p ConversionParams, opts ...Option) (*ConversionResult, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if p, err = p.normalize(); err != nil {
		return nil, err
	}
	res := &ConversionResult{
		Params:      p,
		NativeOrder: serialization.NativeOrder().String(),
		Repetitions: cfg.reps,
		MinBatchNs:  cfg.minBatch.Nanoseconds(),
		Statistic:   cfg.stat.String(),
	}
	groups, group := len(p.Elems)*len(p.Sizes), 0
	for _, e := range p.Elems {
		for _, size := range p.Sizes {
			cases, err := conversionBenches(e, size/e.Size(), p)
			if err != nil {
				return nil, err
			}
			group++
			cfg.progress("conversion %d/%d: %s %s[] (%d cases)", group, groups, FormatSize(size/e.Size()*e.Size()), e, len(cases))
			bs := make([]*bench, len(cases))
			for i, c := range cases {
				bs[i] = c.bench
			}
			ms, err := measureGroup(ctx, cfg, bs)
			if err != nil {
				return nil, err
			}
			for i, c := range cases {
				c.cc.Measurement = ms[i]
				c.cc.MBps = ms[i].MBps(int64(c.cc.Bytes))
				res.Cases = append(res.Cases, c.cc)
			}
		}
	}
	return res, nil
}

// convBench is a conversion case before it is measured.
type convBench struct {
	cc    ConversionCase
	bench *bench
}

// conversionBenches builds the cases of one element type and size.
func conversionBenches(e Elem, n int, p ConversionParams) ([]convBench, error) {
	switch e {
	case ElemInt16:
		return typedConversion(e, n, p, convFuncs[int16]{putInt16sLoop, getInt16sLoop,
			byteview.Put[int16], byteview.Get[int16]})
	case ElemInt32:
		return typedConversion(e, n, p, convFuncs[int32]{putInt32sLoop, getInt32sLoop,
			byteview.Put[int32], byteview.Get[int32]})
	case ElemInt64:
		return typedConversion(e, n, p, convFuncs[int64]{putInt64sLoop, getInt64sLoop,
			byteview.Put[int64], byteview.Get[int64]})
	case ElemFloat32:
		return typedConversion(e, n, p, convFuncs[float32]{putFloat32sLoop, getFloat32sLoop,
			byteview.Put[float32], byteview.Get[float32]})
	case ElemFloat64:
		return typedConversion(e, n, p, convFuncs[float64]{putFloat64sLoop, getFloat64sLoop,
			byteview.Put[float64], byteview.Get[float64]})
	}
	return nil, fmt.Errorf("%w: conversion element type %v", ErrInvalid, e)
}
