package serialization

import (
	"encoding/binary"

	"go.uber.org/zap"
)

// Defaults for the options.
const (
	// DefaultMaxPacketSize is the default largest small-packet body a Writer
	// builds: large enough to amortise the header, small enough to keep the
	// buffers of a connection in cache.
	DefaultMaxPacketSize = 64 << 10

	// DefaultReaderMaxPacketSize is the default largest small-packet body a
	// Reader accepts. It is larger than DefaultMaxPacketSize so that a peer
	// with a somewhat larger packet size still interoperates.
	DefaultReaderMaxPacketSize = 1 << 20

	// DefaultBulkThreshold is the default slice size in bytes from which a
	// slice is sent as a bulk packet straight from the caller's memory
	// instead of being copied into a small packet.
	DefaultBulkThreshold = 4 << 10

	// DefaultMaxMessageSize is the default largest message (wire bytes,
	// headers included) a Writer produces and a Reader accepts.
	DefaultMaxMessageSize = 1 << 30

	// DefaultMaxObjectDepth is the default deepest nesting of arrays and
	// maps a Reader accepts inside a msgpack-encoded object.
	DefaultMaxObjectDepth = 512

	// minPacketSize is the smallest packet body a Writer or Reader can be
	// configured with: it must hold at least a few values of every type.
	minPacketSize = 64

	// maxPacketLimit bounds the packet size options so that a small
	// packet's element counts always fit their 32-bit fields.
	maxPacketLimit = 1 << 30
)

type writerConfig struct {
	maxPacket     int
	bulkThreshold int
	maxMessage    int64
	order         binary.ByteOrder
	log           *zap.Logger
}

type readerConfig struct {
	maxPacket       int
	maxMessage      int64
	maxObjectDepth  int
	maxObjectMemory int64 // 0: maxMessage
	log             *zap.Logger
}

func defaultWriterConfig() writerConfig {
	return writerConfig{
		maxPacket:     DefaultMaxPacketSize,
		bulkThreshold: DefaultBulkThreshold,
		maxMessage:    DefaultMaxMessageSize,
		order:         NativeOrder(),
		log:           zap.NewNop(),
	}
}

func defaultReaderConfig() readerConfig {
	return readerConfig{
		maxPacket:      DefaultReaderMaxPacketSize,
		maxMessage:     DefaultMaxMessageSize,
		maxObjectDepth: DefaultMaxObjectDepth,
		log:            zap.NewNop(),
	}
}

// WriterOption configures a Writer (see NewWriter).
//
// The rest of the module's options are plain functions on a config (ipl.Option,
// registry.Option, mpj.Option, ...). Here they are interfaces, as grpc's DialOption
// is, because one option value (WithLogger) must configure both a Writer and a
// Reader: a function type could serve only one of the two configs.
type WriterOption interface{ applyWriter(*writerConfig) }

// ReaderOption configures a Reader (see NewReader).
type ReaderOption interface{ applyReader(*readerConfig) }

// Option configures both a Writer and a Reader.
type Option interface {
	WriterOption
	ReaderOption
}

type writerOptionFunc func(*writerConfig)

func (f writerOptionFunc) applyWriter(c *writerConfig) { f(c) }

type readerOptionFunc func(*readerConfig)

func (f readerOptionFunc) applyReader(c *readerConfig) { f(c) }

type loggerOption struct{ log *zap.Logger }

func (o loggerOption) applyWriter(c *writerConfig) { c.log = o.log }
func (o loggerOption) applyReader(c *readerConfig) { c.log = o.log }

// WithLogger sets the logger for unusual events (a corrupt stream, a peer's
// Close, a clamped option). It never logs on the hot path. A nil logger
// keeps the default, which discards everything.
func WithLogger(log *zap.Logger) Option {
	if log == nil {
		log = zap.NewNop()
	}
	return loggerOption{log: log}
}

// WithMaxPacketSize sets the largest body of a small packet the Writer
// builds. Larger packets amortise the 32-byte header better; smaller ones
// start reaching the peer earlier. The value is rounded down to a multiple
// of 8 and raised to at least 64. The receiving Reader must accept it (see
// WithReaderMaxPacketSize).
func WithMaxPacketSize(n int) WriterOption {
	return writerOptionFunc(func(c *writerConfig) { c.maxPacket = n })
}

// WithBulkThreshold sets the size in bytes from which a primitive slice (or
// string) is sent as its own bulk packet, straight from the caller's memory,
// instead of being copied into the current small packet. Zero or a negative
// value disables bulk packets: everything is copied.
func WithBulkThreshold(n int) WriterOption {
	return writerOptionFunc(func(c *writerConfig) { c.bulkThreshold = n })
}

// WithMaxMessageSize sets the largest message, in wire bytes with headers,
// the Writer produces; a write that would exceed it fails with ErrTooLarge
// and writes nothing. Zero or a negative value removes the limit.
func WithMaxMessageSize(n int64) WriterOption {
	return writerOptionFunc(func(c *writerConfig) { c.maxMessage = n })
}

// WithByteOrder makes the Writer send in the given byte order instead of the
// native one, which costs a byte swap per element on both sides. It exists
// for tests and for reproducible golden files; nil keeps the native order.
func WithByteOrder(order binary.ByteOrder) WriterOption {
	return writerOptionFunc(func(c *writerConfig) {
		if order != nil {
			c.order = order
		}
	})
}

// WithReaderMaxPacketSize sets the largest small-packet body the Reader
// accepts; it bounds the Reader's buffer. Larger packets are rejected with
// ErrCorrupt and ErrTooLarge. Bulk packets are bounded by the message limit
// instead, because they are read into the caller's memory.
func WithReaderMaxPacketSize(n int) ReaderOption {
	return readerOptionFunc(func(c *readerConfig) { c.maxPacket = n })
}

// WithReaderMaxMessageSize sets the largest message, in wire bytes with
// headers, the Reader accepts (default 1 GiB). It also bounds what a
// ReadObject or ReadString call may allocate (for a msgpack-encoded object,
// unless WithReaderMaxObjectMemory sets another bound). Zero or a negative
// value keeps the default: a Reader of network bytes always has a limit.
func WithReaderMaxMessageSize(n int64) ReaderOption {
	return readerOptionFunc(func(c *readerConfig) { c.maxMessage = n })
}

// WithReaderMaxObjectDepth sets the deepest nesting of arrays and maps the
// Reader accepts inside a msgpack-encoded object; deeper input is rejected
// before decoding, so hostile input cannot exhaust the stack.
func WithReaderMaxObjectDepth(n int) ReaderOption {
	return readerOptionFunc(func(c *readerConfig) { c.maxObjectDepth = n })
}

// WithReaderMaxObjectMemory bounds what decoding one msgpack-encoded object
// (ReadObject of a value that is not a string, primitive or primitive
// slice) may allocate. The msgpack decoder allocates the announced length
// of every slice and map up front, so a few bytes per element on the wire
// can cost hundreds or thousands of bytes each in the destination. Before
// decoding, the Reader estimates an upper bound of that allocation from the
// destination's type (the largest slice element, map entry and pointee
// reachable from it; msgpack's generic types for interfaces) and the
// counts the msgpack bytes announce, and rejects an object over the bound
// with ErrTooLarge, skipping it. The estimate errs high, in the tests up to
// a few times the real allocation (more for map keys that name no field),
// so raise the bound for objects that legitimately grow a lot when decoded.
// The default, and what zero or a negative value keeps, is the maximum
// message size (WithReaderMaxMessageSize).
// Custom decoders (msgpack.CustomDecoder, msgpack.Unmarshaler) are costed as
// if they decoded generic values; what they allocate themselves is theirs.
func WithReaderMaxObjectMemory(n int64) ReaderOption {
	return readerOptionFunc(func(c *readerConfig) { c.maxObjectMemory = n })
}

// normalize clamps out-of-range settings, logging each change.
func (c *writerConfig) normalize() {
	if c.maxPacket < minPacketSize {
		c.log.Warn("serialization: max packet size too small, raised",
			zap.Int("requested", c.maxPacket), zap.Int("used", minPacketSize))
		c.maxPacket = minPacketSize
	}
	c.maxPacket = min(c.maxPacket, maxPacketLimit) &^ 7
	switch {
	case c.maxMessage <= 0:
		c.maxMessage = 1<<63 - 1
	case c.maxMessage < HeaderSize:
		c.log.Warn("serialization: max message size below one packet header, raised",
			zap.Int64("requested", c.maxMessage), zap.Int("used", HeaderSize))
		c.maxMessage = HeaderSize
	}
	if c.bulkThreshold < 0 {
		c.bulkThreshold = 0
	}
}

// newReaderConfig returns the defaults with opts applied, normalized: the limits of a
// Reader, and of a Scanner that is to stop where that Reader would.
func newReaderConfig(opts []ReaderOption) readerConfig {
	cfg := defaultReaderConfig()
	for _, o := range opts {
		if o != nil {
			o.applyReader(&cfg)
		}
	}
	cfg.normalize()
	return cfg
}

// normalize clamps out-of-range settings, logging each change.
func (c *readerConfig) normalize() {
	if c.maxPacket < minPacketSize {
		c.log.Warn("serialization: reader max packet size too small, raised",
			zap.Int("requested", c.maxPacket), zap.Int("used", minPacketSize))
		c.maxPacket = minPacketSize
	}
	c.maxPacket = min(c.maxPacket, maxPacketLimit) &^ 7
	switch {
	case c.maxMessage <= 0:
		c.maxMessage = DefaultMaxMessageSize
	case c.maxMessage < HeaderSize:
		c.log.Warn("serialization: reader max message size below one packet header, raised",
			zap.Int64("requested", c.maxMessage), zap.Int("used", HeaderSize))
		c.maxMessage = HeaderSize
	}
	if c.maxObjectDepth < 1 {
		c.maxObjectDepth = 1
	}
	if c.maxObjectMemory <= 0 {
		c.maxObjectMemory = c.maxMessage
	}
}
