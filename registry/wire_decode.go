package registry

import (
	"bytes"
	"fmt"
	"io"
	"math"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// decodeMessage decodes a frame body. It never panics and never allocates
// more than the body's size for strings: every announced length is checked
// against the bytes that are actually left before anything is read. Any
// problem gives an error wrapping ErrProtocol that names the offending field.
func decodeMessage(body []byte) (*message, error) {
	w := newWireDecoder(body)
	m, err := w.message()
	if err != nil {
		return nil, fmt.Errorf("%w: decode message: %w", ErrProtocol, err)
	}
	return m, nil
}

// wireDecoder reads the msgpack subset used by the protocol with explicit
// bounds. The msgpack decoder reads straight from r (a bytes.Reader is a
// byte scanner, so no buffering sits in between), which lets us check
// announced lengths against r.Len().
type wireDecoder struct {
	r *bytes.Reader
	d *msgpack.Decoder
}

func newWireDecoder(body []byte) *wireDecoder {
	r := bytes.NewReader(body)
	return &wireDecoder{r: r, d: msgpack.NewDecoder(r)}
}

func (w *wireDecoder) message() (*message, error) {
	n, err := w.mapLen()
	if err != nil {
		return nil, fmt.Errorf("message: %w", err)
	}
	m := new(message)
	seenKind := false
	for range n {
		key, err := w.str(maxKeyLength)
		if err != nil {
			return nil, fmt.Errorf("key: %w", err)
		}
		if err := w.field(m, key); err != nil {
			return nil, fmt.Errorf("field %q: %w", key, err)
		}
		if key == keyKind {
			seenKind = true
		}
	}
	if w.r.Len() != 0 {
		return nil, fmt.Errorf("%d trailing bytes after the message", w.r.Len())
	}
	if !seenKind {
		return nil, fmt.Errorf("message has no kind")
	}
	if !m.Kind.known() {
		return nil, fmt.Errorf("unknown message kind %d", m.Kind)
	}
	return m, nil
}

// field decodes the value of one key into m; unknown keys are skipped so
// that later protocol versions may add fields.
func (w *wireDecoder) field(m *message, key string) error {
	var err error
	switch key {
	case keyKind:
		var v uint64
		v, err = w.uint(math.MaxUint8)
		m.Kind = msgKind(v)
	case keyID:
		m.ID, err = w.uint(math.MaxUint64)
	case keyVersion:
		m.Version, err = w.uint(math.MaxUint64)
	case keyPool:
		m.Pool, err = w.str(MaxStringLength)
	case keyPoolSize:
		m.PoolSize, err = w.int()
	case keyAddress:
		m.Address, err = w.str(MaxStringLength)
	case keyTag:
		m.Tag, err = w.str(MaxStringLength)
	case keyName:
		m.Name, err = w.str(MaxStringLength)
	case keyPort:
		m.Port, err = w.str(MaxStringLength)
	case keyTargets:
		m.Targets, err = w.strings(maxTargets)
	case keyMember:
		var id Identifier
		id, err = w.identifier()
		m.Member = &id
	case keyEvent:
		var ev Event
		ev, err = w.event()
		m.Event = &ev
	case keyValue:
		m.Value, err = w.int()
	case keyHeartbeat:
		m.Heartbeat, err = w.int()
	case keyMaxFrame:
		m.MaxFrame, err = w.int()
	case keyDeath:
		m.Death, err = w.int()
	case keyCode:
		var v uint64
		v, err = w.uint(math.MaxUint8)
		m.Code = errCode(v)
	case keyError:
		m.Error, err = w.str(MaxStringLength)
	case keyRejoin:
		var id Identifier
		id, err = w.identifier()
		m.Rejoin = &id
	case keyEpoch:
		m.Epoch, err = w.uint(math.MaxUint64)
	case keyFlags:
		m.Flags, err = w.uint(math.MaxUint64)
	case keyMembers:
		m.Members, err = w.identifiers(maxRestoreItems)
	case keyWon:
		m.Won, err = w.strings(maxRestoreItems)
	case keyBound:
		m.Bound, err = w.boundNames(maxRestoreItems)
	case keySeqs:
		m.Seqs, err = w.sequenceMarks(maxRestoreItems)
	case keyLastSeq:
		m.LastSeq, err = w.uint(math.MaxUint64)
	case keyNextNum:
		m.NextNum, err = w.uint(math.MaxUint64)
	case keyJoinSeq:
		m.JoinSeq, err = w.uint(math.MaxUint64)
	case keyJoinToken:
		m.JoinToken, err = w.uint(math.MaxUint64)
	default:
		err = w.skip(0)
	}
	return err
}

func (w *wireDecoder) peek() (byte, error) {
	c, err := w.d.PeekCode()
	if err != nil {
		return 0, truncated(err)
	}
	return c, nil
}

// truncated turns an end of input inside a value into a clear message.
func truncated(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("message ends inside a value")
	}
	return err
}

// uint reads a non-negative integer no larger than max.
func (w *wireDecoder) uint(max uint64) (uint64, error) {
	c, err := w.peek()
	if err != nil {
		return 0, err
	}
	var v uint64
	switch {
	case c <= msgpcode.PosFixedNumHigh, c == msgpcode.Uint8, c == msgpcode.Uint16,
		c == msgpcode.Uint32, c == msgpcode.Uint64:
		v, err = w.d.DecodeUint64()
	case c >= msgpcode.NegFixedNumLow, c == msgpcode.Int8, c == msgpcode.Int16,
		c == msgpcode.Int32, c == msgpcode.Int64:
		var s int64
		s, err = w.d.DecodeInt64()
		if err == nil && s < 0 {
			return 0, fmt.Errorf("negative value %d where an unsigned integer is expected", s)
		}
		v = uint64(s)
	default:
		return 0, fmt.Errorf("expected an integer, found msgpack code 0x%02x", c)
	}
	if err != nil {
		return 0, truncated(err)
	}
	if v > max {
		return 0, fmt.Errorf("value %d exceeds the maximum %d", v, max)
	}
	return v, nil
}

// int reads a signed 64-bit integer.
func (w *wireDecoder) int() (int64, error) {
	c, err := w.peek()
	if err != nil {
		return 0, err
	}
	switch {
	case c == msgpcode.Uint64:
		v, err := w.d.DecodeUint64()
		if err != nil {
			return 0, truncated(err)
		}
		if v > math.MaxInt64 {
			return 0, fmt.Errorf("value %d does not fit a signed 64-bit integer", v)
		}
		return int64(v), nil
	case msgpcode.IsFixedNum(c), c == msgpcode.Uint8, c == msgpcode.Uint16, c == msgpcode.Uint32,
		c == msgpcode.Int8, c == msgpcode.Int16, c == msgpcode.Int32, c == msgpcode.Int64:
		v, err := w.d.DecodeInt64()
		if err != nil {
			return 0, truncated(err)
		}
		return v, nil
	default:
		return 0, fmt.Errorf("expected an integer, found msgpack code 0x%02x", c)
	}
}

// str reads a msgpack string of at most max bytes. The length is checked
// against the remaining input before the string is allocated.
func (w *wireDecoder) str(max int) (string, error) {
	c, err := w.peek()
	if err != nil {
		return "", err
	}
	if !msgpcode.IsString(c) {
		return "", fmt.Errorf("expected a string, found msgpack code 0x%02x", c)
	}
	n, err := w.d.DecodeBytesLen()
	if err != nil {
		return "", truncated(err)
	}
	if n > max {
		return "", fmt.Errorf("string of %d bytes exceeds the maximum of %d", n, max)
	}
	if n > w.r.Len() {
		return "", fmt.Errorf("string of %d bytes but only %d bytes left", n, w.r.Len())
	}
	if n == 0 {
		return "", nil
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(w.r, b); err != nil {
		return "", truncated(err)
	}
	return string(b), nil
}

// arrayLen reads an array header announcing at most max elements. Every
// element takes at least one byte, so more elements than bytes left is an
// error before anything is allocated.
func (w *wireDecoder) arrayLen(max int) (int, error) {
	c, err := w.peek()
	if err != nil {
		return 0, err
	}
	if !msgpcode.IsFixedArray(c) && c != msgpcode.Array16 && c != msgpcode.Array32 {
		return 0, fmt.Errorf("expected an array, found msgpack code 0x%02x", c)
	}
	n, err := w.d.DecodeArrayLen()
	if err != nil {
		return 0, truncated(err)
	}
	if n > max {
		return 0, fmt.Errorf("array of %d elements exceeds the maximum of %d", n, max)
	}
	if n > w.r.Len() {
		return 0, fmt.Errorf("array of %d elements but only %d bytes left", n, w.r.Len())
	}
	return n, nil
}

// mapLen reads a map header; like arrayLen it is checked against the input.
func (w *wireDecoder) mapLen() (int, error) {
	c, err := w.peek()
	if err != nil {
		return 0, err
	}
	if !msgpcode.IsFixedMap(c) && c != msgpcode.Map16 && c != msgpcode.Map32 {
		return 0, fmt.Errorf("expected a map, found msgpack code 0x%02x", c)
	}
	n, err := w.d.DecodeMapLen()
	if err != nil {
		return 0, truncated(err)
	}
	if n > w.r.Len()/2 {
		return 0, fmt.Errorf("map of %d entries but only %d bytes left", n, w.r.Len())
	}
	return n, nil
}

// strings reads an array of at most max strings. An empty array gives nil,
// as the encoder leaves empty lists out.
func (w *wireDecoder) strings(max int) ([]string, error) {
	n, err := w.arrayLen(max)
	if err != nil || n == 0 {
		return nil, err
	}
	ss := make([]string, n)
	for i := range ss {
		if ss[i], err = w.str(MaxStringLength); err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
	}
	return ss, nil
}

// identifier reads [pool, id, address, tag].
func (w *wireDecoder) identifier() (Identifier, error) {
	var f [4]string
	if err := w.fixedStrings(f[:]); err != nil {
		return Identifier{}, fmt.Errorf("identifier: %w", err)
	}
	return Identifier{Pool: f[0], ID: f[1], Address: f[2], Tag: f[3]}, nil
}

// fixedStrings reads an array of exactly len(dst) strings into dst,
// allocating nothing but the strings.
func (w *wireDecoder) fixedStrings(dst []string) error {
	n, err := w.arrayLen(len(dst))
	if err != nil {
		return err
	}
	if n != len(dst) {
		return fmt.Errorf("array has %d elements, want %d", n, len(dst))
	}
	for i := range dst {
		if dst[i], err = w.str(MaxStringLength); err != nil {
			return fmt.Errorf("element %d: %w", i, err)
		}
	}
	return nil
}

// identifiers reads an array of at most max identifiers; every element
// takes at least five bytes, and max bounds the allocation up front.
func (w *wireDecoder) identifiers(max int) ([]Identifier, error) {
	n, err := w.arrayLen(max)
	if err != nil || n == 0 {
		return nil, err
	}
	ids := make([]Identifier, 0, min(n, w.r.Len()/5+1))
	for i := range n {
		id, err := w.identifier()
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// boundNames reads an array of at most max [name, port] pairs.
func (w *wireDecoder) boundNames(max int) ([]boundName, error) {
	n, err := w.arrayLen(max)
	if err != nil || n == 0 {
		return nil, err
	}
	bs := make([]boundName, 0, min(n, w.r.Len()/3+1))
	for i := range n {
		var pair [2]string
		if err := w.fixedStrings(pair[:]); err != nil {
			return nil, fmt.Errorf("element %d (name, port): %w", i, err)
		}
		bs = append(bs, boundName{Name: pair[0], Port: pair[1]})
	}
	return bs, nil
}

// sequenceMarks reads an array of at most max [name, next] pairs.
func (w *wireDecoder) sequenceMarks(max int) ([]sequenceMark, error) {
	n, err := w.arrayLen(max)
	if err != nil || n == 0 {
		return nil, err
	}
	qs := make([]sequenceMark, 0, min(n, w.r.Len()/3+1))
	for i := range n {
		k, err := w.arrayLen(2)
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
		if k != 2 {
			return nil, fmt.Errorf("element %d has %d values, want 2 (name, next)", i, k)
		}
		var q sequenceMark
		if q.Name, err = w.str(MaxStringLength); err != nil {
			return nil, fmt.Errorf("element %d name: %w", i, err)
		}
		if q.Next, err = w.int(); err != nil {
			return nil, fmt.Errorf("element %d next: %w", i, err)
		}
		qs = append(qs, q)
	}
	return qs, nil
}

// event reads [seq, type, member, name].
func (w *wireDecoder) event() (Event, error) {
	n, err := w.arrayLen(4)
	if err != nil {
		return Event{}, fmt.Errorf("event: %w", err)
	}
	if n != 4 {
		return Event{}, fmt.Errorf("event has %d elements, want 4", n)
	}
	var ev Event
	if ev.Seq, err = w.uint(math.MaxUint64); err != nil {
		return Event{}, fmt.Errorf("event seq: %w", err)
	}
	t, err := w.int()
	if err != nil {
		return Event{}, fmt.Errorf("event type: %w", err)
	}
	ev.Type = EventType(t)
	if int64(ev.Type) != t || !poolEvent(ev.Type) {
		return Event{}, fmt.Errorf("unknown event type %d", t)
	}
	if ev.Member, err = w.identifier(); err != nil {
		return Event{}, fmt.Errorf("event member: %w", err)
	}
	if ev.Name, err = w.str(MaxStringLength); err != nil {
		return Event{}, fmt.Errorf("event name: %w", err)
	}
	return ev, nil
}

// skip passes over one value of an unknown field. Nesting is limited to
// maxSkipDepth and every length is checked against the input, so skipping
// costs at most linear time and no allocation beyond small scratch space.
func (w *wireDecoder) skip(depth int) error {
	if depth > maxSkipDepth {
		return fmt.Errorf("unknown value nested deeper than %d levels", maxSkipDepth)
	}
	c, err := w.peek()
	if err != nil {
		return err
	}
	switch {
	case msgpcode.IsFixedNum(c), c == msgpcode.Nil, c == msgpcode.False, c == msgpcode.True,
		c == msgpcode.Uint8, c == msgpcode.Uint16, c == msgpcode.Uint32, c == msgpcode.Uint64,
		c == msgpcode.Int8, c == msgpcode.Int16, c == msgpcode.Int32, c == msgpcode.Int64,
		c == msgpcode.Float, c == msgpcode.Double:
		return truncated(w.d.Skip())
	case msgpcode.IsString(c), msgpcode.IsBin(c):
		n, err := w.d.DecodeBytesLen()
		if err != nil {
			return truncated(err)
		}
		if n > w.r.Len() {
			return fmt.Errorf("value of %d bytes but only %d bytes left", n, w.r.Len())
		}
		_, err = w.r.Seek(int64(n), io.SeekCurrent)
		return err
	case msgpcode.IsFixedArray(c), c == msgpcode.Array16, c == msgpcode.Array32:
		n, err := w.arrayLen(math.MaxInt32)
		if err != nil {
			return err
		}
		for range n {
			if err := w.skip(depth + 1); err != nil {
				return err
			}
		}
		return nil
	case msgpcode.IsFixedMap(c), c == msgpcode.Map16, c == msgpcode.Map32:
		n, err := w.mapLen()
		if err != nil {
			return err
		}
		for range 2 * n {
			if err := w.skip(depth + 1); err != nil {
				return err
			}
		}
		return nil
	default:
		return fmt.Errorf("unsupported msgpack code 0x%02x", c)
	}
}
