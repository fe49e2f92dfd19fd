package registry

import (
	"bytes"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// encodeFrame encodes m as a complete frame: length prefix and msgpack body.
func encodeFrame(m *message) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(64 + len(m.Pool) + len(m.Address) + len(m.Tag) + len(m.Name) + len(m.Port) + len(m.Error))
	buf.Write(make([]byte, frameHeaderSize))
	enc := msgpack.GetEncoder()
	defer msgpack.PutEncoder(enc)
	enc.Reset(&buf)
	if err := encodeMessage(enc, m); err != nil {
		return nil, fmt.Errorf("encode %s message: %w", m.Kind, err)
	}
	frame := buf.Bytes()
	putFrameHeader(frame)
	return frame, nil
}

// encodeMessage writes m as a msgpack map holding only its non-zero fields.
func encodeMessage(enc *msgpack.Encoder, m *message) error {
	type field struct {
		key   string
		write func() error
	}
	str := func(s string) func() error { return func() error { return enc.EncodeString(s) } }
	uns := func(v uint64) func() error { return func() error { return enc.EncodeUint(v) } }
	sig := func(v int64) func() error { return func() error { return enc.EncodeInt(v) } }

	fields := make([]field, 0, 12)
	add := func(present bool, key string, write func() error) {
		if present {
			fields = append(fields, field{key, write})
		}
	}
	add(true, keyKind, uns(uint64(m.Kind)))
	add(m.ID != 0, keyID, uns(m.ID))
	add(m.Version != 0, keyVersion, uns(m.Version))
	add(m.Pool != "", keyPool, str(m.Pool))
	add(m.PoolSize != 0, keyPoolSize, sig(m.PoolSize))
	add(m.Address != "", keyAddress, str(m.Address))
	add(m.Tag != "", keyTag, str(m.Tag))
	add(m.Name != "", keyName, str(m.Name))
	add(m.Port != "", keyPort, str(m.Port))
	add(len(m.Targets) != 0, keyTargets, func() error { return encodeStrings(enc, m.Targets) })
	add(m.Member != nil, keyMember, func() error { return encodeIdentifier(enc, *m.Member) })
	add(m.Event != nil, keyEvent, func() error { return encodeEvent(enc, *m.Event) })
	add(m.Value != 0, keyValue, sig(m.Value))
	add(m.Heartbeat != 0, keyHeartbeat, sig(m.Heartbeat))
	add(m.MaxFrame != 0, keyMaxFrame, sig(m.MaxFrame))
	add(m.Death != 0, keyDeath, sig(m.Death))
	add(m.Code != codeNone, keyCode, uns(uint64(m.Code)))
	add(m.Error != "", keyError, str(m.Error))
	add(m.Rejoin != nil, keyRejoin, func() error { return encodeIdentifier(enc, *m.Rejoin) })
	add(m.Epoch != 0, keyEpoch, uns(m.Epoch))
	add(m.Flags != 0, keyFlags, uns(m.Flags))
	add(len(m.Members) != 0, keyMembers, func() error { return encodeIdentifiers(enc, m.Members) })
	add(len(m.Won) != 0, keyWon, func() error { return encodeStrings(enc, m.Won) })
	add(len(m.Bound) != 0, keyBound, func() error { return encodeBoundNames(enc, m.Bound) })
	add(len(m.Seqs) != 0, keySeqs, func() error { return encodeSequenceMarks(enc, m.Seqs) })
	add(m.LastSeq != 0, keyLastSeq, uns(m.LastSeq))
	add(m.NextNum != 0, keyNextNum, uns(m.NextNum))
	add(m.JoinSeq != 0, keyJoinSeq, uns(m.JoinSeq))
	add(m.JoinToken != 0, keyJoinToken, uns(m.JoinToken))

	if err := enc.EncodeMapLen(len(fields)); err != nil {
		return err
	}
	for _, f := range fields {
		if err := enc.EncodeString(f.key); err != nil {
			return err
		}
		if err := f.write(); err != nil {
			return fmt.Errorf("field %q: %w", f.key, err)
		}
	}
	return nil
}

func encodeStrings(enc *msgpack.Encoder, ss []string) error {
	if err := enc.EncodeArrayLen(len(ss)); err != nil {
		return err
	}
	for _, s := range ss {
		if err := enc.EncodeString(s); err != nil {
			return err
		}
	}
	return nil
}

// encodeIdentifier writes an Identifier as [pool, id, address, tag].
func encodeIdentifier(enc *msgpack.Encoder, id Identifier) error {
	return encodeStrings(enc, []string{id.Pool, id.ID, id.Address, id.Tag})
}

func encodeIdentifiers(enc *msgpack.Encoder, ids []Identifier) error {
	if err := enc.EncodeArrayLen(len(ids)); err != nil {
		return err
	}
	for _, id := range ids {
		if err := encodeIdentifier(enc, id); err != nil {
			return err
		}
	}
	return nil
}

// encodeBoundNames writes [[name, port], ...].
func encodeBoundNames(enc *msgpack.Encoder, bs []boundName) error {
	if err := enc.EncodeArrayLen(len(bs)); err != nil {
		return err
	}
	for _, b := range bs {
		if err := encodeStrings(enc, []string{b.Name, b.Port}); err != nil {
			return err
		}
	}
	return nil
}

// encodeSequenceMarks writes [[name, next], ...].
func encodeSequenceMarks(enc *msgpack.Encoder, qs []sequenceMark) error {
	if err := enc.EncodeArrayLen(len(qs)); err != nil {
		return err
	}
	for _, q := range qs {
		if err := enc.EncodeArrayLen(2); err != nil {
			return err
		}
		if err := enc.EncodeString(q.Name); err != nil {
			return err
		}
		if err := enc.EncodeInt(q.Next); err != nil {
			return err
		}
	}
	return nil
}

// encodeEvent writes an Event as [seq, type, member, name].
func encodeEvent(enc *msgpack.Encoder, ev Event) error {
	if err := enc.EncodeArrayLen(4); err != nil {
		return err
	}
	if err := enc.EncodeUint(ev.Seq); err != nil {
		return err
	}
	if err := enc.EncodeInt(int64(ev.Type)); err != nil {
		return err
	}
	if err := encodeIdentifier(enc, ev.Member); err != nil {
		return err
	}
	return enc.EncodeString(ev.Name)
}
