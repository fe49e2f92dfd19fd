package serialization

import (
	"bytes"
	"errors"
	"math"
	"net"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func TestOptionsAreClamped(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	log := zap.New(core)
	w := NewWriter(KindData, &memSink{}, WithLogger(log), WithMaxPacketSize(10), WithMaxMessageSize(5),
		WithBulkThreshold(-3), WithByteOrder(nil), nil)
	eq(t, w.cfg.maxPacket, minPacketSize)
	eq(t, w.cfg.maxMessage, HeaderSize)
	eq(t, w.cfg.bulkThreshold, 0)
	eq(t, isNative(w.cfg.order), true)
	eq(t, w.Kind(), KindData)
	if logs.FilterMessageSnippet("raised").Len() != 2 {
		t.Fatalf("want two warnings about raised options, got %v", logs.All())
	}
	eq(t, NewWriter(KindData, &memSink{}, WithMaxPacketSize(1001)).cfg.maxPacket, 1000)
	eq(t, NewWriter(KindData, &memSink{}, WithMaxPacketSize(math.MaxInt)).cfg.maxPacket, maxPacketLimit)

	r := NewReader(KindObject, bytes.NewReader(nil), WithLogger(log), WithReaderMaxPacketSize(1),
		WithReaderMaxMessageSize(-1), WithReaderMaxObjectDepth(0), nil)
	eq(t, r.cfg.maxPacket, minPacketSize)
	eq(t, r.cfg.maxMessage, DefaultMaxMessageSize)
	eq(t, r.cfg.maxObjectDepth, 1)
	eq(t, r.cfg.maxObjectMemory, DefaultMaxMessageSize) // follows the message limit
	eq(t, r.Kind(), KindObject)
	eq(t, NewReader(KindData, bytes.NewReader(nil), WithReaderMaxMessageSize(8)).cfg.maxMessage, HeaderSize)
	eq(t, NewReader(KindData, bytes.NewReader(nil), WithReaderMaxMessageSize(1<<20)).cfg.maxObjectMemory, 1<<20)
	eq(t, NewReader(KindData, bytes.NewReader(nil), WithReaderMaxObjectMemory(5)).cfg.maxObjectMemory, 5)
	wantErr(t, NewReader(KindData, nil).Next(), ErrUnsupported, "no source")
	_ = WithLogger(nil) // keeps the no-op logger
}

func TestLoggerSeesCorruptStreams(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	r := NewReader(KindData, bytes.NewReader([]byte("not a packet, not at all, really")), WithLogger(zap.New(core)))
	wantErr(t, r.Next(), ErrCorrupt)
	if logs.FilterMessageSnippet("unusable").Len() != 1 {
		t.Fatalf("the corrupt stream was not logged: %v", logs.All())
	}
}

func TestSinkFunc(t *testing.T) {
	var got [][]byte
	sink := SinkFunc(func(bufs net.Buffers) error {
		for _, b := range bufs {
			got = append(got, bytes.Clone(b))
		}
		return nil
	})
	w := NewWriter(KindData, sink)
	must(t, w.WriteInt32(1))
	get[int64](t)(w.Finish())
	if len(got) != 1 || len(got[0]) != HeaderSize+8 { // a small packet goes as one flat buffer
		t.Fatalf("got %d buffers", len(got))
	}
	boom := errors.New("boom")
	wantErr(t, WriteClose(SinkFunc(func(net.Buffers) error { return boom })), boom, "close packet")
	wantErr(t, NewWriter(KindData, SinkFunc(nil)).WriteInt32(1), ErrUnsupported, "Sink")
}
