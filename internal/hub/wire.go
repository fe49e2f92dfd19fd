package hub

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"
)

// The hub protocol, after the pool check (package poolauth) that starts every
// connection to a hub. Every message is one frame: a type byte, a big-endian uint16
// payload length (at most maxPayload) and the payload. Strings in a payload carry a
// one-byte length (str8), a message a two-byte one (str16). A frame is read with exactly
// its own bytes, never more, so that what follows it on a relayed connection (the
// members' end-to-end handshake) stays in the socket.
//
// The first frame of a connection says what it is for:
//
//	register (member -> hub, control connection): version, keepalive interval (uint32 ms),
//	         key (str8), address count (uint8), addresses (str8 each)
//	         answered by registered: reachable (0/1), hub interval (uint32 ms), observed (str8),
//	         or by a result frame that refuses it; then pings both ways, and incoming
//	         (hub -> member): a 16-byte token, asking the member to open an accept connection.
//	relay    (dialler -> hub): version, target key (str8), target hub (str8, empty: this hub)
//	accept   (member -> hub): version, own key (str8), token (16 bytes)
//	         both answered by a result: code (uint8), message (str16); code ok means the
//	         connection is spliced and the next byte is the other member's.
const (
	protocolVersion = 1
	maxPayload      = 8192
	maxMessage      = 1024
	tokenSize       = 16

	// MaxKey bounds a member's key, MaxAdvertise the addresses it advertises,
	// maxAddr each address and a target hub's address.
	MaxKey       = 64
	MaxAdvertise = 16
	maxAddr      = 255
)

// Frame types.
const (
	frameRegister   byte = 1
	frameRegistered byte = 2
	frameRelay      byte = 3
	frameAccept     byte = 4
	frameResult     byte = 5
	frameIncoming   byte = 6
	framePing       byte = 7
)

// Result codes: what a hub says to a relay or accept request.
const (
	codeOK byte = iota
	codeNoSuchMember
	codeRefused
	codeUnreachable
	codeTimeout
	codeProtocol
	codeUnauthenticated // refused by the pool check (of the hub a request was forwarded to)
	codeCount           // not a code: the number of codes
)

type token [tokenSize]byte

type frame struct {
	typ     byte
	payload []byte
}

// writeFrame writes one frame in a single Write.
func writeFrame(w io.Writer, typ byte, payload []byte) error {
	if len(payload) > maxPayload {
		return fmt.Errorf("%w: a frame of %d bytes (at most %d)", ErrProtocol, len(payload), maxPayload)
	}
	b := make([]byte, 3, 3+len(payload))
	b[0] = typ
	binary.BigEndian.PutUint16(b[1:], uint16(len(payload)))
	_, err := w.Write(append(b, payload...))
	return err
}

// LooksLikeFrame reports whether b, the first bytes a peer sent (at least 3), begin as a
// frame of the hub protocol does: a known frame type and a payload length within
// bounds. Another protocol's reader uses it to say what a peer that makes no sense to it
// probably is: the registry, when a member's IBIS_HUB names a registry, or a registry
// address reaches a hub.
func LooksLikeFrame(b []byte) bool {
	return len(b) >= 3 && b[0] >= frameRegister && b[0] <= framePing && binary.BigEndian.Uint16(b[1:3]) <= maxPayload
}

// readFrame reads exactly one frame.
func readFrame(r io.Reader) (frame, error) {
	var h [3]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return frame{}, err
	}
	n := binary.BigEndian.Uint16(h[1:])
	if n > maxPayload {
		return frame{}, fmt.Errorf("%w: a frame of %d bytes (at most %d)", ErrProtocol, n, maxPayload)
	}
	f := frame{typ: h[0], payload: make([]byte, n)}
	if _, err := io.ReadFull(r, f.payload); err != nil {
		return frame{}, err
	}
	return f, nil
}

// encoder appends fields to a payload.
type encoder struct{ b []byte }

func (e *encoder) u8(v byte)     { e.b = append(e.b, v) }
func (e *encoder) u32(v uint32)  { e.b = binary.BigEndian.AppendUint32(e.b, v) }
func (e *encoder) raw(v []byte)  { e.b = append(e.b, v...) }
func (e *encoder) str8(s string) { e.b = append(append(e.b, byte(len(s))), s...) }
func (e *encoder) str16(s string) {
	e.b = binary.BigEndian.AppendUint16(e.b, uint16(len(s)))
	e.b = append(e.b, s...)
}

// decoder reads fields from a payload; the first error sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrProtocol, what)
	}
}

func (d *decoder) take(n int, what string) []byte {
	if d.err != nil {
		return nil
	}
	if len(d.b) < n {
		d.fail("short " + what)
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) u8(what string) byte {
	if v := d.take(1, what); v != nil {
		return v[0]
	}
	return 0
}

func (d *decoder) u32(what string) uint32 {
	if v := d.take(4, what); v != nil {
		return binary.BigEndian.Uint32(v)
	}
	return 0
}

func (d *decoder) str8(what string, limit int) string {
	n := int(d.u8(what))
	if n > limit {
		d.fail(fmt.Sprintf("%s of %d bytes (at most %d)", what, n, limit))
		return ""
	}
	return string(d.take(n, what))
}

func (d *decoder) str16(what string, limit int) string {
	v := d.take(2, what)
	if v == nil {
		return ""
	}
	n := int(binary.BigEndian.Uint16(v))
	if n > limit {
		d.fail(fmt.Sprintf("%s of %d bytes (at most %d)", what, n, limit))
		return ""
	}
	return string(d.take(n, what))
}

func (d *decoder) version() {
	if v := d.u8("version"); d.err == nil && v != protocolVersion {
		d.fail(fmt.Sprintf("hub protocol version %d, this side speaks %d", v, protocolVersion))
	}
}

// end fails if bytes are left over.
func (d *decoder) end(what string) error {
	if d.err == nil && len(d.b) != 0 {
		d.fail(fmt.Sprintf("%d bytes after the %s", len(d.b), what))
	}
	return d.err
}

// registerMsg is the first frame of a control connection.
type registerMsg struct {
	interval  time.Duration
	key       string
	advertise []string
}

// Bounds of a keepalive interval on the wire.
const (
	minInterval = time.Millisecond
	maxInterval = 10 * time.Minute
)

func durationMS(d time.Duration) uint32 { return uint32(d / time.Millisecond) }

func (m registerMsg) encode() []byte {
	e := encoder{}
	e.u8(protocolVersion)
	e.u32(durationMS(m.interval))
	e.str8(m.key)
	e.u8(byte(len(m.advertise)))
	for _, a := range m.advertise {
		e.str8(a)
	}
	return e.b
}

func decodeRegister(b []byte) (registerMsg, error) {
	d := decoder{b: b}
	d.version()
	var m registerMsg
	m.interval = time.Duration(d.u32("interval")) * time.Millisecond
	m.key = d.str8("key", MaxKey)
	n := int(d.u8("address count"))
	if n > MaxAdvertise {
		d.fail(fmt.Sprintf("%d advertised addresses (at most %d)", n, MaxAdvertise))
	}
	for i := 0; i < n && d.err == nil; i++ {
		m.advertise = append(m.advertise, d.str8("address", maxAddr))
	}
	if err := d.end("registration"); err != nil {
		return registerMsg{}, err
	}
	if m.key == "" {
		return registerMsg{}, fmt.Errorf("%w: an empty key", ErrProtocol)
	}
	if err := checkInterval(m.interval); err != nil {
		return registerMsg{}, err
	}
	return m, nil
}

// registeredMsg is the hub's answer to a registration.
type registeredMsg struct {
	reachable bool
	interval  time.Duration
	observed  string
}

func (m registeredMsg) encode() []byte {
	e := encoder{}
	if m.reachable {
		e.u8(1)
	} else {
		e.u8(0)
	}
	e.u32(durationMS(m.interval))
	e.str8(m.observed)
	return e.b
}

func decodeRegistered(b []byte) (registeredMsg, error) {
	d := decoder{b: b}
	var m registeredMsg
	switch d.u8("reachable") {
	case 0:
	case 1:
		m.reachable = true
	default:
		d.fail("reachable flag not 0 or 1")
	}
	m.interval = time.Duration(d.u32("interval")) * time.Millisecond
	m.observed = d.str8("observed address", maxAddr)
	if err := d.end("registration's answer"); err != nil {
		return registeredMsg{}, err
	}
	if err := checkInterval(m.interval); err != nil {
		return registeredMsg{}, err
	}
	return m, nil
}

// relayMsg asks a hub for a relayed connection to a member.
type relayMsg struct {
	key       string
	targetHub string
}

func (m relayMsg) encode() []byte {
	e := encoder{}
	e.u8(protocolVersion)
	e.str8(m.key)
	e.str8(m.targetHub)
	return e.b
}

func decodeRelay(b []byte) (relayMsg, error) {
	d := decoder{b: b}
	d.version()
	var m relayMsg
	m.key = d.str8("key", MaxKey)
	m.targetHub = d.str8("target hub", maxAddr)
	if err := d.end("relay request"); err != nil {
		return relayMsg{}, err
	}
	if m.key == "" {
		return relayMsg{}, fmt.Errorf("%w: an empty key", ErrProtocol)
	}
	return m, nil
}

// acceptMsg is a member's connection for the relay with the token.
type acceptMsg struct {
	key   string
	token token
}

func (m acceptMsg) encode() []byte {
	e := encoder{}
	e.u8(protocolVersion)
	e.str8(m.key)
	e.raw(m.token[:])
	return e.b
}

func decodeAccept(b []byte) (acceptMsg, error) {
	d := decoder{b: b}
	d.version()
	var m acceptMsg
	m.key = d.str8("key", MaxKey)
	copy(m.token[:], d.take(tokenSize, "token"))
	if err := d.end("accept"); err != nil {
		return acceptMsg{}, err
	}
	return m, nil
}

// resultMsg is a hub's answer to a relay or accept request.
type resultMsg struct {
	code    byte
	message string
}

func (m resultMsg) encode() []byte {
	e := encoder{}
	e.u8(m.code)
	msg := m.message
	if len(msg) > maxMessage {
		msg = msg[:maxMessage]
	}
	e.str16(msg)
	return e.b
}

func decodeResult(b []byte) (resultMsg, error) {
	d := decoder{b: b}
	var m resultMsg
	m.code = d.u8("code")
	m.message = d.str16("message", maxMessage)
	if err := d.end("result"); err != nil {
		return resultMsg{}, err
	}
	if m.code >= codeCount {
		return resultMsg{}, fmt.Errorf("%w: result code %d", ErrProtocol, m.code)
	}
	return m, nil
}

func decodeIncoming(b []byte) (token, error) {
	d := decoder{b: b}
	var t token
	copy(t[:], d.take(tokenSize, "token"))
	return t, d.end("incoming")
}

// checkInterval refuses a keepalive interval outside minInterval to maxInterval.
func checkInterval(d time.Duration) error {
	if d < minInterval || d > maxInterval {
		return fmt.Errorf("%w: a keepalive interval of %v (from %v to %v)", ErrProtocol, d, minInterval, maxInterval)
	}
	return nil
}
