package main

// The messages. A data message is
//
//	kind (byte: kindArray or kindOneByOne), sender (int32), port (int32), seq (int64),
//	count (int32), then count int64 values: one WriteArray, or count WriteInt64 calls
//
// and the last message of every send port is
//
//	kindEnd, sender, port, sent (int64: data messages sent), rank (int32: the sender's
//	launch index, -1 if unknown), peak RSS (int64: the sender process's VmHWM in bytes)
//
// sender is the sending process's join number in the pool, port the send port's index
// in it, seq the message's number on that port (0, 1, ...). Value j of a message is
// valueBase(sender, port, seq) + j, so the receiver can tell a damaged or misplaced
// message from a good one.

import (
	"fmt"

	"github.com/ibisgo/ibis/ipl"
)

// Message kinds.
const (
	kindArray    byte = 1 // data, values in one WriteArray
	kindOneByOne byte = 2 // data, values written one by one
	kindEnd      byte = 3 // a send port's last message
)

// streamKey names one send port of the pool: its process's join number and its index.
type streamKey struct {
	sender, port int32
}

// endInfo is what a send port's last message says.
type endInfo struct {
	sent    int64
	rank    int32
	peakRSS int64
}

// valueBase is the first value of message seq of a stream: a mix of the three numbers
// (splitmix64's finaliser), so that values of different messages differ.
func valueBase(k streamKey, seq int64) int64 {
	z := uint64(uint32(k.sender))<<48 ^ uint64(uint32(k.port))<<32 ^ uint64(seq)*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return int64(z ^ z>>31)
}

// fillValues sets buf to the values of message seq of k.
func fillValues(buf []int64, k streamKey, seq int64) {
	base := valueBase(k, seq)
	for j := range buf {
		buf[j] = base + int64(j)
	}
}

// writeData writes data message seq of k: with one WriteArray of buf (filled here), or
// with len(buf) WriteInt64 calls when oneByOne.
func writeData(w ipl.WriteMessage, k streamKey, seq int64, buf []int64, oneByOne bool) error {
	kind := kindArray
	if oneByOne {
		kind = kindOneByOne
	}
	if err := writeHeader(w, kind, k); err != nil {
		return err
	}
	if err := w.WriteInt64(seq); err != nil {
		return err
	}
	if err := w.WriteInt32(int32(len(buf))); err != nil {
		return err
	}
	if !oneByOne {
		fillValues(buf, k, seq)
		return w.WriteArray(buf)
	}
	base := valueBase(k, seq)
	for j := range buf {
		if err := w.WriteInt64(base + int64(j)); err != nil {
			return err
		}
	}
	return nil
}

// writeEnd writes a send port's last message.
func writeEnd(w ipl.WriteMessage, k streamKey, e endInfo) error {
	if err := writeHeader(w, kindEnd, k); err != nil {
		return err
	}
	if err := w.WriteInt64(e.sent); err != nil {
		return err
	}
	if err := w.WriteInt32(e.rank); err != nil {
		return err
	}
	return w.WriteInt64(e.peakRSS)
}

func writeHeader(w ipl.WriteMessage, kind byte, k streamKey) error {
	if err := w.WriteByte(kind); err != nil {
		return err
	}
	if err := w.WriteInt32(k.sender); err != nil {
		return err
	}
	return w.WriteInt32(k.port)
}

// received is one message as the receiver read it.
type received struct {
	kind byte
	key  streamKey
	seq  int64   // data messages
	good bool    // data messages: the count and every value are right
	end  endInfo // end messages
}

// readMessage reads a message of any kind; for a data message it checks the values
// against what the sender must have written, with buf (of -values int64) to read an
// array into. An error means the message could not be read as this program writes
// them (a damaged stream) or the port failed.
func readMessage(m ipl.ReadMessage, buf []int64) (received, error) {
	var r received
	var err error
	if r.kind, err = m.ReadByte(); err != nil {
		return r, err
	}
	if r.key.sender, err = m.ReadInt32(); err != nil {
		return r, err
	}
	if r.key.port, err = m.ReadInt32(); err != nil {
		return r, err
	}
	switch r.kind {
	case kindArray, kindOneByOne:
		if r.seq, err = m.ReadInt64(); err != nil {
			return r, err
		}
		r.good, err = readValues(m, r, buf)
		return r, err
	case kindEnd:
		if r.end.sent, err = m.ReadInt64(); err != nil {
			return r, err
		}
		if r.end.rank, err = m.ReadInt32(); err != nil {
			return r, err
		}
		r.end.peakRSS, err = m.ReadInt64()
		return r, err
	}
	return r, fmt.Errorf("message of unknown kind %d from %v", r.kind, r.key)
}

// readValues reads and checks a data message's values; false means a wrong count or a
// wrong value (the rest of the message is then left to Finish to skip).
func readValues(m ipl.ReadMessage, r received, buf []int64) (bool, error) {
	n, err := m.ReadInt32()
	if err != nil {
		return false, err
	}
	if int(n) != len(buf) {
		return false, nil
	}
	base := valueBase(r.key, r.seq)
	if r.kind == kindArray {
		if err := m.ReadArray(buf); err != nil {
			return false, err
		}
		for j, v := range buf {
			if v != base+int64(j) {
				return false, nil
			}
		}
		return true, nil
	}
	for j := range buf {
		v, err := m.ReadInt64()
		if err != nil {
			return false, err
		}
		if v != base+int64(j) {
			return false, nil
		}
	}
	return true, nil
}
