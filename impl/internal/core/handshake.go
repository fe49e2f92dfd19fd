package core

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ibisgo/ibis/ipl"
)

// The handshake opens every connection: the send port sends a Request (its port
// identifier, the receive port's name, its port type, the Ibis it believes it dials),
// the receive side answers with a Reply. Both are framed as the 4-byte magic "IBGO", one
// version byte, a 4-byte big-endian length and a msgpack body of at most
// MaxHandshakeSize bytes. The answers (ReplyCode) are: accepted; denied (the connection
// handler said no, the sender is of another pool or of none, or the registry declared
// its instance dead); disabled; already connected; type mismatch (naming the
// capabilities only one side has); no such port (also for a sender this instance has
// not yet heard of as a member, so a newcomer retries until its Joined event arrives);
// not many-to-x. A refused connection is closed right after the reply.
//
// Connect retries on no such port, disabled and already connected (the receiver has not
// yet seen this port's previous connection end), with back-off from 2 ms doubling to 256 ms,
// until its context (or the connect timeout) ends, the port closes or the Ibis ends, so
// processes can start in any order. Over tcp and nio the request is preceded by TLS,
// when configured, and the pool check of internal/poolauth (docs/SECURITY.md); a
// connection that fails them is closed before a byte of it is read as a request.
const (
	handshakeMagic   = "IBGO"
	handshakeVersion = 1
	// MaxHandshakeSize bounds a handshake body; larger frames are refused unread.
	MaxHandshakeSize = 64 << 10
)

// ErrHandshake wraps every malformed or unexpected handshake frame.
var ErrHandshake = errors.New("core: bad handshake")

// ReplyCode is the receive side's answer to a connection request.
type ReplyCode uint8

// Reply codes, mirroring the answers of the Java Ibis connection set-up.
const (
	ReplyAccepted ReplyCode = iota + 1
	ReplyDenied
	ReplyDisabled
	ReplyAlreadyConnected
	ReplyTypeMismatch
	ReplyNoSuchPort
	ReplyNotManyToX
)

var replyErrors = map[ReplyCode]error{
	ReplyDenied:           ipl.ErrDenied,
	ReplyDisabled:         ipl.ErrDisabled,
	ReplyAlreadyConnected: ipl.ErrAlreadyConnected,
	ReplyTypeMismatch:     ipl.ErrTypeMismatch,
	ReplyNoSuchPort:       ipl.ErrNoSuchPort,
	ReplyNotManyToX:       ipl.ErrNotManyToOne,
}

// Request asks a receive port to accept a connection from a send port.
type Request struct {
	From     ipl.SendPortIdentifier `msgpack:"from"`
	To       string                 `msgpack:"to"`   // receive port name
	PortType string                 `msgpack:"type"` // PortType.String()
	// Target is the Ibis the sender believes it dials; a stale address reused by another
	// instance is answered with ReplyNoSuchPort instead of a wrong connection.
	Target string `msgpack:"target"`
	// Route is set by the transport, never sent: how a socket it did not accept came
	// (the route string Injector.Inject was given), "" for an accepted one.
	Route string `msgpack:"-"`
}

// Reply answers a Request.
type Reply struct {
	Code   ReplyCode `msgpack:"code"`
	Detail string    `msgpack:"detail"`
	// MaxMessage is the largest message (wire bytes) the accepting port takes, so that
	// its sender refuses a bigger one at the write; 0 (a peer that does not say) is no
	// limit beyond the sender's own.
	MaxMessage int64 `msgpack:"max,omitempty"`
}

// Err turns a refusal into an error matching the ipl sentinel for its code, or nil.
func (r *Reply) Err() error {
	if r.Code == ReplyAccepted {
		return nil
	}
	base, ok := replyErrors[r.Code]
	if !ok {
		return fmt.Errorf("%w: unknown reply code %d", ErrHandshake, r.Code)
	}
	if r.Detail == "" {
		return base
	}
	return fmt.Errorf("%w: %s", base, r.Detail)
}

// WriteRequest sends a handshake request.
func WriteRequest(w io.Writer, req *Request) error { return writeFrame(w, req) }

// ReadRequest reads a handshake request, allocating at most MaxHandshakeSize bytes.
func ReadRequest(r io.Reader) (*Request, error) {
	var req Request
	if err := readFrame(r, &req); err != nil {
		return nil, err
	}
	if req.To == "" || req.PortType == "" {
		return nil, fmt.Errorf("%w: request names no port or port type", ErrHandshake)
	}
	return &req, nil
}

// WriteReply sends a handshake reply.
func WriteReply(w io.Writer, rep *Reply) error { return writeFrame(w, rep) }

// ReadReply reads a handshake reply.
func ReadReply(r io.Reader) (*Reply, error) {
	var rep Reply
	if err := readFrame(r, &rep); err != nil {
		return nil, err
	}
	if rep.Code < ReplyAccepted || rep.Code > ReplyNotManyToX {
		return nil, fmt.Errorf("%w: unknown reply code %d", ErrHandshake, rep.Code)
	}
	return &rep, nil
}

func writeFrame(w io.Writer, v any) error {
	body, err := msgpack.Marshal(v)
	if err != nil {
		return fmt.Errorf("core: encoding handshake: %w", err)
	}
	if len(body) > MaxHandshakeSize {
		return fmt.Errorf("%w: frame of %d bytes exceeds %d", ErrHandshake, len(body), MaxHandshakeSize)
	}
	frame := make([]byte, 9+len(body))
	copy(frame, handshakeMagic)
	frame[4] = handshakeVersion
	binary.BigEndian.PutUint32(frame[5:9], uint32(len(body)))
	copy(frame[9:], body)
	_, err = w.Write(frame)
	return err
}

func readFrame(r io.Reader, v any) error {
	var hdr [9]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return fmt.Errorf("%w: reading header: %w", ErrHandshake, err)
	}
	if string(hdr[:4]) != handshakeMagic {
		return fmt.Errorf("%w: not an Ibis-Go peer (magic %q)", ErrHandshake, hdr[:4])
	}
	if hdr[4] != handshakeVersion {
		return fmt.Errorf("%w: peer speaks handshake version %d, this is %d", ErrHandshake, hdr[4], handshakeVersion)
	}
	n := binary.BigEndian.Uint32(hdr[5:9])
	if n > MaxHandshakeSize {
		return fmt.Errorf("%w: frame length %d exceeds %d", ErrHandshake, n, MaxHandshakeSize)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return fmt.Errorf("%w: reading body: %w", ErrHandshake, err)
	}
	if err := msgpack.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%w: decoding body: %w", ErrHandshake, err)
	}
	return nil
}
