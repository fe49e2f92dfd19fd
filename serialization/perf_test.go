package serialization

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"testing"
	"time"
	"unsafe"
)

func TestVectoredBulkWrite(t *testing.T) {
	data := make([]float64, 1<<17) // 1 MiB
	for i := range data {
		data[i] = float64(i)
	}
	sink := &memSink{}
	w := NewWriter(KindData, sink)
	must(t, w.WriteArray(data))
	n := get[int64](t)(w.Finish())
	eq(t, n, HeaderSize+1<<20+HeaderSize)
	if len(sink.calls) != 1 {
		t.Fatalf("%d WritePacket calls, want one vectored write", len(sink.calls))
	}
	bufs := sink.calls[0]
	if len(bufs) != 3 || len(bufs[0]) != HeaderSize || len(bufs[1]) != 1<<20 || len(bufs[2]) != HeaderSize {
		t.Fatalf("buffers of lengths %v, want header, 1 MiB, end header", lens(bufs))
	}
	if unsafe.Pointer(&bufs[1][0]) != unsafe.Pointer(&data[0]) {
		t.Fatal("the bulk body is a copy, not the caller's memory")
	}
	eq(t, bufs[2][2], FlagEnd)

	// A small value, a bulk slice, a small value: still one write.
	sink = &memSink{}
	w = NewWriter(KindData, sink)
	must(t, w.WriteInt32(1))
	must(t, w.WriteArray(data))
	must(t, w.WriteInt32(2))
	get[int64](t)(w.Finish())
	if len(sink.calls) != 1 {
		t.Fatalf("%d WritePacket calls, want 1", len(sink.calls))
	}
}

func lens(bufs [][]byte) []int {
	var l []int
	for _, b := range bufs {
		l = append(l, len(b))
	}
	return l
}

func TestPendingIsBounded(t *testing.T) {
	// Alternating small values and bulk slices must not pile up unsent
	// packets: the Writer hands them over in bounded batches.
	sink := &memSink{}
	w := NewWriter(KindData, sink, WithBulkThreshold(64))
	big := make([]int64, 16)
	for range 1000 {
		must(t, w.WriteInt32(1))
		must(t, w.WriteArray(big))
	}
	if len(w.held) > maxHeldPackets || len(w.free) > maxHeldPackets+1 || len(w.pending) > maxPendingBufs {
		t.Fatalf("held %d packets, %d free, %d pending buffers", len(w.held), len(w.free), len(w.pending))
	}
	get[int64](t)(w.Finish())
	for _, c := range sink.calls {
		if len(c) > maxPendingBufs+8 {
			t.Fatalf("a write of %d buffers", len(c))
		}
	}
}

func TestZeroAllocs(t *testing.T) {
	big := make([]float64, 1<<15)
	small := make([]int32, 100)
	s2 := [][]int16{make([]int16, 10), make([]int16, 20)}
	write := func(w *Writer) {
		_ = w.WriteInt32(1)
		_ = w.WriteFloat64(2)
		_ = w.WriteBool(true)
		_ = w.WriteInt64(3)
		_ = w.WriteString("short")
		_ = w.WriteArray(small)
		_ = w.WriteArray(big)
		_ = w.WriteArray(s2)
		_, _ = w.Finish()
	}
	for _, o := range orders {
		t.Run(o.name, func(t *testing.T) {
			w := NewWriter(KindData, &discardSink{}, WithByteOrder(o.order))
			write(w) // warm up the buffers
			if a := testing.AllocsPerRun(50, func() { write(w) }); a != 0 {
				t.Fatalf("Writer: %v allocs per message, want 0", a)
			}

			sink := &memSink{}
			write(NewWriter(KindData, sink, WithByteOrder(o.order)))
			msg := sink.bytes()
			src := bytes.NewReader(msg)
			r := NewReader(KindData, src)
			gs, gb, g2 := make([]int32, 100), make([]float64, 1<<15), [][]int16{make([]int16, 10), make([]int16, 20)}
			read := func() {
				src.Reset(msg)
				if err := r.Next(); err != nil {
					t.Fatal(err)
				}
				_, _ = r.ReadInt32()
				_, _ = r.ReadFloat64()
				_, _ = r.ReadBool()
				_, _ = r.ReadInt64()
				_ = r.skipIn(secI32, 4, "") // the string's length and bytes, without allocating a string
				_ = r.skipIn(secI8, 5, "")
				_ = r.ReadArray(gs)
				_ = r.ReadArray(gb)
				if err := r.ReadArray(g2); err != nil {
					t.Fatal(err)
				}
				if err := r.Finish(); err != nil {
					t.Fatal(err)
				}
			}
			read()
			if a := testing.AllocsPerRun(50, read); a != 0 {
				t.Fatalf("Reader: %v allocs per message, want 0", a)
			}
		})
	}
}

func TestTCPRoundTrip(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer ln.Close()
	big := fill[float64](1<<17, 5)
	const msgs = 20

	var wg sync.WaitGroup
	var sendErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			sendErr = err
			return
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(time.Minute)) // a failsafe, not a timing assumption
		sink := NewStreamSink(conn)
		w := NewWriter(KindObject, sink, WithByteOrder(binary.BigEndian))
		for i := range msgs {
			if err := firstErr(w.WriteInt32(int32(i)), w.WriteArray(big), w.WriteString("tcp"),
				w.WriteObject(map[string]int{"i": i})); err != nil {
				sendErr = err
				return
			}
			if _, err := w.Finish(); err != nil {
				sendErr = err
				return
			}
		}
		sendErr = WriteClose(sink)
	}()

	conn, err := ln.Accept()
	must(t, err)
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	r := NewReader(KindObject, bufio.NewReader(conn))
	got := make([]float64, len(big))
	for i := range msgs {
		must(t, r.Next())
		eq(t, get[int32](t)(r.ReadInt32()), int32(i))
		must(t, r.ReadArray(got))
		if !sameBits(got, big) {
			t.Fatalf("message %d: array differs", i)
		}
		eq(t, get[string](t)(r.ReadString()), "tcp")
		var m map[string]int
		must(t, r.ReadObject(&m))
		eq(t, m["i"], i)
		must(t, r.Finish())
	}
	if err := r.Next(); !errors.Is(err, ErrClosedByPeer) {
		t.Fatalf("after the last message: %v, want ErrClosedByPeer", err)
	}
	wg.Wait()
	must(t, sendErr)
}

// TestAsBytesAliases: the byte view of a slice is its memory (the conversions
// themselves are tested in internal/byteview's users; cmd/ibis-bench/internal/memexp
// compares them with per-element loops).
func TestAsBytesAliases(t *testing.T) {
	// The byte view aliases the slice.
	s := []int32{1}
	AsBytes(s)[0] = 9
	if NativeOrder() == binary.LittleEndian {
		eq(t, s[0], 9)
	} else {
		eq(t, s[0], 9<<24)
	}
	if AsBytes([]int64{}) != nil {
		t.Fatal("AsBytes of an empty slice")
	}
}

func TestSwapCopyMatchesLoop(t *testing.T) {
	for _, esz := range []int{2, 4, 8} {
		for n := 0; n < 40; n += esz {
			src := fill[byte](n, n+esz)
			want := make([]byte, n)
			for i := 0; i < n; i += esz {
				for j := range esz {
					want[i+j] = src[i+esz-1-j]
				}
			}
			got := make([]byte, n)
			swapCopy(got, src, esz)
			if !bytes.Equal(got, want) {
				t.Fatalf("swapCopy esz %d n %d: % x, want % x", esz, n, got, want)
			}
			swapCopy(src, src, esz) // in place
			if !bytes.Equal(src, want) {
				t.Fatalf("in-place swapCopy esz %d n %d", esz, n)
			}
		}
	}
}
