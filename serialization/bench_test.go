package serialization

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
)

// swapped is the byte order that is not native: the worst case, where every
// element is byte-swapped on both sides.
func swapped() binary.ByteOrder {
	if nativeLittle {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

var benchOrders = []struct {
	name  string
	order binary.ByteOrder
}{{"native", NativeOrder()}, {"swapped", swapped()}}

var benchSizes = []int{64, 1 << 10, 16 << 10, 1 << 20}

func BenchmarkWriteInt64(b *testing.B) {
	w := NewWriter(KindData, &discardSink{})
	b.ReportAllocs()
	b.SetBytes(8)
	for i := 0; b.Loop(); i++ {
		_ = w.WriteInt64(int64(i))
		if i%1024 == 1023 {
			_, _ = w.Finish()
		}
	}
}

func BenchmarkReadInt64(b *testing.B) {
	sink := &memSink{}
	w := NewWriter(KindData, sink)
	for i := range 1024 {
		_ = w.WriteInt64(int64(i))
	}
	_, _ = w.Finish()
	msg := sink.bytes()
	src := bytes.NewReader(msg)
	r := NewReader(KindData, src)
	b.ReportAllocs()
	b.SetBytes(8)
	for i := 0; b.Loop(); i++ {
		if i%1024 == 0 {
			src.Reset(msg)
			if err := r.Next(); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := r.ReadInt64(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEmptyMessage is the fixed cost of a message: one 32-byte packet.
func BenchmarkEmptyMessage(b *testing.B) {
	w := NewWriter(KindData, &discardSink{})
	b.ReportAllocs()
	for b.Loop() {
		_, _ = w.Finish()
	}
}

func BenchmarkWriteArray(b *testing.B) {
	for _, o := range benchOrders {
		for _, size := range benchSizes {
			f64 := make([]float64, size/8)
			i32 := make([]int32, size/4)
			for _, c := range []struct {
				name string
				v    any
			}{{"float64", f64}, {"int32", i32}} {
				b.Run(fmt.Sprintf("%s/%s/%d", c.name, o.name, size), func(b *testing.B) {
					w := NewWriter(KindData, &discardSink{}, WithByteOrder(o.order))
					b.ReportAllocs()
					b.SetBytes(int64(size))
					for b.Loop() {
						_ = w.WriteArray(c.v)
						_, _ = w.Finish()
					}
				})
			}
		}
	}
}

func BenchmarkReadArray(b *testing.B) {
	for _, o := range benchOrders {
		for _, size := range benchSizes {
			for _, c := range []struct {
				name string
				v    any
			}{{"float64", make([]float64, size/8)}, {"int32", make([]int32, size/4)}} {
				b.Run(fmt.Sprintf("%s/%s/%d", c.name, o.name, size), func(b *testing.B) {
					sink := &memSink{}
					w := NewWriter(KindData, sink, WithByteOrder(o.order))
					_ = w.WriteArray(c.v)
					_, _ = w.Finish()
					msg := sink.bytes()
					src := bytes.NewReader(msg)
					r := NewReader(KindData, src)
					b.ReportAllocs()
					b.SetBytes(int64(size))
					for b.Loop() {
						src.Reset(msg)
						if err := firstErr(r.Next(), r.ReadArray(c.v), r.Finish()); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

func BenchmarkObject(b *testing.B) {
	values := []struct {
		name string
		v    any
		dst  func() any
	}{
		{"float64s-1K", make([]float64, 128), func() any { return new([]float64) }},
		{"2D-16x16", make2D(16, 16), func() any { return new([][]int32) }},
		{"string", "a short string", func() any { return new(string) }},
		{"struct-msgpack", point{X: 1, Y: 2, Label: "p", Tags: []string{"a"}}, func() any { return new(point) }},
		{"map-msgpack", map[string]any{"a": 1, "b": "c"}, func() any { return new(map[string]any) }},
		// a master/worker request: the small object of a busy server's every message
		{"struct-codec-small", smallRequest{Worker: 7}, func() any { return new(smallRequest) }},
	}
	for _, v := range values {
		b.Run("write/"+v.name, func(b *testing.B) {
			w := NewWriter(KindObject, &discardSink{})
			b.ReportAllocs()
			for b.Loop() {
				_ = w.WriteObject(v.v)
				_, _ = w.Finish()
			}
		})
		b.Run("read/"+v.name, func(b *testing.B) {
			sink := &memSink{}
			w := NewWriter(KindObject, sink)
			_ = w.WriteObject(v.v)
			_, _ = w.Finish()
			msg := sink.bytes()
			src := bytes.NewReader(msg)
			r := NewReader(KindObject, src)
			dst := v.dst()
			b.ReportAllocs()
			for b.Loop() {
				src.Reset(msg)
				if err := firstErr(r.Next(), r.ReadObject(dst), r.Finish()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// smallRequest is a request of ibis-bench masterworker: one small struct.
type smallRequest struct{ Worker int32 }

func make2D(rows, cols int) [][]int32 {
	s := make([][]int32, rows)
	for i := range s {
		s[i] = make([]int32, cols)
	}
	return s
}

// BenchmarkConvert compares the conversions: a per-element loop through a
// binary.ByteOrder (the baseline), a byte view (copy or word-wise swap),
// and the no-copy byte view a bulk packet uses.
func BenchmarkTCPBulkThreshold(b *testing.B) {
	for _, size := range []int{256, 1 << 10, 2 << 10, 4 << 10, 8 << 10, 16 << 10, 64 << 10} {
		for _, th := range []int{0, 1} {
			b.Run(fmt.Sprintf("size=%d/threshold=%d", size, th), func(b *testing.B) {
				benchTCP(b, size, th)
			})
		}
	}
}

func benchTCP(b *testing.B, size, threshold int) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	data := make([]float64, size/8)
	var wg sync.WaitGroup
	var readErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		conn, err := ln.Accept()
		if err != nil {
			readErr = err
			return
		}
		defer conn.Close()
		r := NewReader(KindData, bufio.NewReaderSize(conn, 64<<10))
		dst := make([]float64, len(data))
		for {
			if err := r.Next(); err != nil {
				if err != io.EOF && err != ErrClosedByPeer {
					readErr = err
				}
				return
			}
			if err := firstErr(r.ReadArray(dst), r.Finish()); err != nil {
				readErr = err
				return
			}
		}
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	sink := NewStreamSink(conn)
	w := NewWriter(KindData, sink, WithBulkThreshold(threshold))
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		if err := w.WriteArray(data); err != nil {
			b.Fatal(err)
		}
		if _, err := w.Finish(); err != nil {
			b.Fatal(err)
		}
	}
	_ = WriteClose(sink)
	conn.Close()
	wg.Wait()
	if readErr != nil {
		b.Fatal(readErr)
	}
}
