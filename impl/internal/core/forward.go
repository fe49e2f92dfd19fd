package core

// Code below forwards every typed call of a message to its serialization stream,
// refusing calls on a finished message and mapping errors onto the ipl sentinels.
// It is written out by hand-run generation from the list of types; keep it in step
// with ipl.WriteMessage and ipl.ReadMessage.

// WriteBool appends a bool to the message.
func (m *writeMessage) WriteBool(v bool) error {
	if m.finished {
		return m.finishedErr()
	}
	return writeError(m.w.WriteBool(v))
}

// WriteByte appends a byte to the message.
func (m *writeMessage) WriteByte(v byte) error {
	if m.finished {
		return m.finishedErr()
	}
	return writeError(m.w.WriteByte(v))
}

// WriteInt8 appends a int8 to the message.
func (m *writeMessage) WriteInt8(v int8) error {
	if m.finished {
		return m.finishedErr()
	}
	return writeError(m.w.WriteInt8(v))
}

// WriteInt16 appends a int16 to the message.
func (m *writeMessage) WriteInt16(v int16) error {
	if m.finished {
		return m.finishedErr()
	}
	return writeError(m.w.WriteInt16(v))
}

// WriteUint16 appends a uint16 to the message.
func (m *writeMessage) WriteUint16(v uint16) error {
	if m.finished {
		return m.finishedErr()
	}
	return writeError(m.w.WriteUint16(v))
}

// WriteInt32 appends a int32 to the message.
func (m *writeMessage) WriteInt32(v int32) error {
	if m.finished {
		return m.finishedErr()
	}
	return writeError(m.w.WriteInt32(v))
}

// WriteUint32 appends a uint32 to the message.
func (m *writeMessage) WriteUint32(v uint32) error {
	if m.finished {
		return m.finishedErr()
	}
	return writeError(m.w.WriteUint32(v))
}

// WriteInt64 appends a int64 to the message.
func (m *writeMessage) WriteInt64(v int64) error {
	if m.finished {
		return m.finishedErr()
	}
	return writeError(m.w.WriteInt64(v))
}

// WriteUint64 appends a uint64 to the message.
func (m *writeMessage) WriteUint64(v uint64) error {
	if m.finished {
		return m.finishedErr()
	}
	return writeError(m.w.WriteUint64(v))
}

// WriteInt appends a int to the message.
func (m *writeMessage) WriteInt(v int) error {
	if m.finished {
		return m.finishedErr()
	}
	return writeError(m.w.WriteInt(v))
}

// WriteUint appends a uint to the message.
func (m *writeMessage) WriteUint(v uint) error {
	if m.finished {
		return m.finishedErr()
	}
	return writeError(m.w.WriteUint(v))
}

// WriteFloat32 appends a float32 to the message.
func (m *writeMessage) WriteFloat32(v float32) error {
	if m.finished {
		return m.finishedErr()
	}
	return writeError(m.w.WriteFloat32(v))
}

// WriteFloat64 appends a float64 to the message.
func (m *writeMessage) WriteFloat64(v float64) error {
	if m.finished {
		return m.finishedErr()
	}
	return writeError(m.w.WriteFloat64(v))
}

// WriteString appends a string to the message.
func (m *writeMessage) WriteString(v string) error {
	if m.finished {
		return m.finishedErr()
	}
	return writeError(m.w.WriteString(v))
}

// ReadBool takes the next bool from the message.
func (m *readMessage) ReadBool() (bool, error) {
	if m.finished {
		var zero bool
		return zero, m.finishedErr()
	}
	v, err := m.ic.rd.ReadBool()
	if err != nil {
		return v, m.fail(err)
	}
	return v, nil
}

// ReadByte takes the next byte from the message.
func (m *readMessage) ReadByte() (byte, error) {
	if m.finished {
		var zero byte
		return zero, m.finishedErr()
	}
	v, err := m.ic.rd.ReadByte()
	if err != nil {
		return v, m.fail(err)
	}
	return v, nil
}

// ReadInt8 takes the next int8 from the message.
func (m *readMessage) ReadInt8() (int8, error) {
	if m.finished {
		var zero int8
		return zero, m.finishedErr()
	}
	v, err := m.ic.rd.ReadInt8()
	if err != nil {
		return v, m.fail(err)
	}
	return v, nil
}

// ReadInt16 takes the next int16 from the message.
func (m *readMessage) ReadInt16() (int16, error) {
	if m.finished {
		var zero int16
		return zero, m.finishedErr()
	}
	v, err := m.ic.rd.ReadInt16()
	if err != nil {
		return v, m.fail(err)
	}
	return v, nil
}

// ReadUint16 takes the next uint16 from the message.
func (m *readMessage) ReadUint16() (uint16, error) {
	if m.finished {
		var zero uint16
		return zero, m.finishedErr()
	}
	v, err := m.ic.rd.ReadUint16()
	if err != nil {
		return v, m.fail(err)
	}
	return v, nil
}

// ReadInt32 takes the next int32 from the message.
func (m *readMessage) ReadInt32() (int32, error) {
	if m.finished {
		var zero int32
		return zero, m.finishedErr()
	}
	v, err := m.ic.rd.ReadInt32()
	if err != nil {
		return v, m.fail(err)
	}
	return v, nil
}

// ReadUint32 takes the next uint32 from the message.
func (m *readMessage) ReadUint32() (uint32, error) {
	if m.finished {
		var zero uint32
		return zero, m.finishedErr()
	}
	v, err := m.ic.rd.ReadUint32()
	if err != nil {
		return v, m.fail(err)
	}
	return v, nil
}

// ReadInt64 takes the next int64 from the message.
func (m *readMessage) ReadInt64() (int64, error) {
	if m.finished {
		var zero int64
		return zero, m.finishedErr()
	}
	v, err := m.ic.rd.ReadInt64()
	if err != nil {
		return v, m.fail(err)
	}
	return v, nil
}

// ReadUint64 takes the next uint64 from the message.
func (m *readMessage) ReadUint64() (uint64, error) {
	if m.finished {
		var zero uint64
		return zero, m.finishedErr()
	}
	v, err := m.ic.rd.ReadUint64()
	if err != nil {
		return v, m.fail(err)
	}
	return v, nil
}

// ReadInt takes the next int from the message.
func (m *readMessage) ReadInt() (int, error) {
	if m.finished {
		var zero int
		return zero, m.finishedErr()
	}
	v, err := m.ic.rd.ReadInt()
	if err != nil {
		return v, m.fail(err)
	}
	return v, nil
}

// ReadUint takes the next uint from the message.
func (m *readMessage) ReadUint() (uint, error) {
	if m.finished {
		var zero uint
		return zero, m.finishedErr()
	}
	v, err := m.ic.rd.ReadUint()
	if err != nil {
		return v, m.fail(err)
	}
	return v, nil
}

// ReadFloat32 takes the next float32 from the message.
func (m *readMessage) ReadFloat32() (float32, error) {
	if m.finished {
		var zero float32
		return zero, m.finishedErr()
	}
	v, err := m.ic.rd.ReadFloat32()
	if err != nil {
		return v, m.fail(err)
	}
	return v, nil
}

// ReadFloat64 takes the next float64 from the message.
func (m *readMessage) ReadFloat64() (float64, error) {
	if m.finished {
		var zero float64
		return zero, m.finishedErr()
	}
	v, err := m.ic.rd.ReadFloat64()
	if err != nil {
		return v, m.fail(err)
	}
	return v, nil
}

// ReadString takes the next string from the message.
func (m *readMessage) ReadString() (string, error) {
	if m.finished {
		var zero string
		return zero, m.finishedErr()
	}
	v, err := m.ic.rd.ReadString()
	if err != nil {
		return v, m.fail(err)
	}
	return v, nil
}
