package poolauth

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"syscall"
)

// The exchange on the wire, before anything else a connection carries (the caller sets
// the connection's deadline):
//
//	server -> client  challenge: "IBAU", version, Ns (32 bytes)
//	client -> server  hello:     "IBAU", version, pool length (uint16), pool, Nc (32 bytes),
//	                             1 and ClientProof (32 bytes), or 0 without a secret
//	server -> client  verdict:   0 (accepted), then 1 and ServerProof, or 0 without a secret;
//	                             or 1 (refused), reason length (uint16), reason
//
// The client sends the hello's first five bytes ("IBAU", version) at once, without
// waiting for the challenge: the byte stream is the same, but a member that expects TLS
// then sees a plain client at once (a TLS client's first bytes are a ClientHello) and can
// refuse it with a reason (Refuse) instead of both sides waiting for the other.
//
// Integers are big-endian. Every field has a fixed size or a bound (MaxPoolName,
// maxReason), so that a peer cannot make the other side allocate more.
const (
	wireMagic   = "IBAU"
	wireVersion = 1
	// MaxPoolName bounds the pool name of a hello.
	MaxPoolName = 1024
	maxReason   = 1024
)

// ErrProtocol: the peer does not speak this exchange (not an Ibis-Go peer, another
// version of it, or garbage).
var ErrProtocol = errors.New("poolauth: protocol error")

// ErrStranger: the server did not begin the pool check at all: it closed or reset the
// connection before its challenge, or sent something that is not one (and not TLS).
// Whatever listens there is no Ibis-Go peer, so a dialler with other addresses of the
// peer it wants tries those. It comes wrapped with ErrProtocol where bytes came.
var ErrStranger = errors.New("poolauth: no Ibis-Go peer answered")

// Refusal is the server's reason for refusing a client, which Accept returns (wrapping
// ErrUnauthenticated) for the caller to log with the peer's address.
type Refusal struct {
	Pool   string
	Reason string
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("%v: pool %q: %s", ErrUnauthenticated, r.Pool, r.Reason)
}

// Unwrap makes a Refusal match ErrUnauthenticated.
func (r *Refusal) Unwrap() error { return ErrUnauthenticated }

// Lookup returns the secret a server requires for a pool (the zero Secret: none), or
// false if it does not serve that pool at all.
type Lookup func(pool string) (Secret, bool)

// Accept runs the server's side of the exchange on conn and returns the client's pool.
// A client that fails the check gets the verdict refused and Accept returns a *Refusal;
// a client that does not speak the exchange, an error matching ErrProtocol. Either way
// the caller closes the connection and reads nothing more from it.
func Accept(conn io.ReadWriter, lookup Lookup) (string, error) {
	ns, err := sendChallenge(conn)
	if err != nil {
		return "", err
	}
	pool, nc, proof, err := readHello(conn)
	if err != nil {
		return pool, err
	}
	refuse := func(reason string) (string, error) {
		_ = writeRefusal(conn, reason)
		return pool, &Refusal{Pool: pool, Reason: reason}
	}
	secret, ok := lookup(pool)
	switch {
	case !ok:
		return refuse("the pool is not served here")
	case secret.IsSet() && proof == nil:
		return refuse("the pool has a secret and the client gave none")
	case secret.IsSet():
		if secret.CheckClient(pool, ns, nc, *proof) != nil {
			return refuse("wrong proof: a wrong secret, or a replayed handshake")
		}
		sp := secret.ServerProof(pool, ns, nc)
		_, err = conn.Write(append([]byte{0, 1}, sp[:]...))
	default:
		_, err = conn.Write([]byte{0, 0})
	}
	if err != nil {
		return pool, fmt.Errorf("poolauth: sending the verdict: %w", err)
	}
	return pool, nil
}

// Refuse runs the server's side of the exchange on conn to refuse the client whatever
// its pool, for reason (such as a server limit; at most 1 KiB is sent): the client's
// Dial returns an error matching ErrUnauthenticated that quotes it. It returns the
// client's pool once the refusal is written.
func Refuse(conn io.ReadWriter, reason string) (string, error) {
	if _, err := sendChallenge(conn); err != nil {
		return "", err
	}
	pool, _, _, err := readHello(conn)
	if err != nil {
		return pool, err
	}
	if err := writeRefusal(conn, reason); err != nil {
		return pool, fmt.Errorf("poolauth: sending the refusal: %w", err)
	}
	return pool, nil
}

// sendChallenge writes the server's challenge: the magic, the version and a fresh nonce,
// which it returns.
func sendChallenge(w io.Writer) (Nonce, error) {
	ns, err := NewNonce()
	if err != nil {
		return ns, err
	}
	challenge := append(append([]byte(wireMagic), wireVersion), ns[:]...)
	if _, err := w.Write(challenge); err != nil {
		return ns, fmt.Errorf("poolauth: sending the challenge: %w", err)
	}
	return ns, nil
}

// writeRefusal writes the verdict that refuses a client, with reason cut to maxReason
// bytes.
func writeRefusal(w io.Writer, reason string) error {
	if len(reason) > maxReason {
		reason = reason[:maxReason]
	}
	v := []byte{1, 0, 0}
	binary.BigEndian.PutUint16(v[1:], uint16(len(reason)))
	_, err := w.Write(append(v, reason...))
	return err
}

// PlainHello reports whether b, the first bytes a client sent, are the start of a
// plain (not TLS) hello of this exchange.
func PlainHello(b []byte) bool { return len(b) >= 4 && string(b[:4]) == wireMagic }

// readHello reads and checks a client's hello; proof is nil when the client has no
// secret.
func readHello(r io.Reader) (pool string, nc Nonce, proof *Proof, err error) {
	var head [7]byte
	if err := readFull(r, head[:], "hello"); err != nil {
		return "", nc, nil, err
	}
	if err := checkMagic(head[:5], "client"); err != nil {
		return "", nc, nil, err
	}
	n := binary.BigEndian.Uint16(head[5:])
	if n > MaxPoolName {
		return "", nc, nil, fmt.Errorf("%w: a pool name of %d bytes (at most %d)", ErrProtocol, n, MaxPoolName)
	}
	rest := make([]byte, int(n)+NonceSize+1)
	if err := readFull(r, rest, "hello"); err != nil {
		return "", nc, nil, err
	}
	pool = string(rest[:n])
	copy(nc[:], rest[n:])
	switch rest[len(rest)-1] {
	case 0:
		return pool, nc, nil, nil
	case 1:
		var p Proof
		if err := readFull(r, p[:], "hello"); err != nil {
			return pool, nc, nil, err
		}
		return pool, nc, &p, nil
	}
	return pool, nc, nil, fmt.Errorf("%w: proof flag %d", ErrProtocol, rest[len(rest)-1])
}

// Dial runs the client's side of the exchange on conn for a pool: it answers the
// server's challenge and, when it has a secret, requires the server's proof (mutual).
// A refusal or a server that cannot prove it knows the secret is an error matching
// ErrUnauthenticated; a server that does not speak the exchange, ErrProtocol.
func Dial(conn io.ReadWriter, pool string, secret Secret) error {
	if len(pool) > MaxPoolName {
		return fmt.Errorf("poolauth: the pool name has %d bytes, more than %d", len(pool), MaxPoolName)
	}
	if _, err := conn.Write([]byte{wireMagic[0], wireMagic[1], wireMagic[2], wireMagic[3], wireVersion}); err != nil {
		return fmt.Errorf("poolauth: sending the hello: %w", err)
	}
	var ch [5 + NonceSize]byte
	if err := readFull(conn, ch[:], "challenge"); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
			return fmt.Errorf("%w (it closed the connection before the pool check's challenge): %w", ErrStranger, err)
		}
		return err
	}
	if err := checkMagic(ch[:5], "server"); err != nil {
		if !tlsRecord(ch[:]) && string(ch[:4]) != wireMagic {
			return fmt.Errorf("%w: %w", ErrStranger, err)
		}
		return err
	}
	var ns Nonce
	copy(ns[:], ch[5:])
	nc, err := NewNonce()
	if err != nil {
		return err
	}
	hello := []byte{0, 0} // after the magic and version sent above
	binary.BigEndian.PutUint16(hello, uint16(len(pool)))
	hello = append(append(hello, pool...), nc[:]...)
	if secret.IsSet() {
		p := secret.ClientProof(pool, ns, nc)
		hello = append(append(hello, 1), p[:]...)
	} else {
		hello = append(hello, 0)
	}
	if _, err := conn.Write(hello); err != nil {
		return fmt.Errorf("poolauth: sending the hello: %w", err)
	}
	return readVerdict(conn, pool, secret, ns, nc)
}

// readVerdict reads the server's verdict and checks its proof.
func readVerdict(r io.Reader, pool string, secret Secret, ns, nc Nonce) error {
	var v [2]byte
	if err := readFull(r, v[:1], "verdict"); err != nil {
		return err
	}
	switch v[0] {
	case 0:
	case 1:
		if err := readFull(r, v[:], "refusal"); err != nil {
			return err
		}
		n := binary.BigEndian.Uint16(v[:])
		if n > maxReason {
			return fmt.Errorf("%w: a refusal of %d bytes", ErrProtocol, n)
		}
		reason := make([]byte, n)
		if err := readFull(r, reason, "refusal"); err != nil {
			return err
		}
		return fmt.Errorf("%w: the server refused pool %q: %s", ErrUnauthenticated, pool, reason)
	default:
		return fmt.Errorf("%w: verdict %d", ErrProtocol, v[0])
	}
	if err := readFull(r, v[:1], "verdict"); err != nil {
		return err
	}
	switch {
	case v[0] > 1:
		return fmt.Errorf("%w: proof flag %d", ErrProtocol, v[0])
	case v[0] == 0 && secret.IsSet():
		return fmt.Errorf("%w: the server of pool %q has no secret: it cannot prove it belongs to the pool", ErrUnauthenticated, pool)
	case v[0] == 0:
		return nil
	}
	var p Proof
	if err := readFull(r, p[:], "verdict"); err != nil {
		return err
	}
	if !secret.IsSet() {
		return nil // the server proved a secret we cannot check; it accepted us, so it has none to require
	}
	return secret.CheckServer(pool, ns, nc, p)
}

// checkMagic checks the magic and version at the start of a peer's first message.
func checkMagic(b []byte, peer string) error {
	if string(b[:4]) != wireMagic {
		if tlsRecord(b) {
			return fmt.Errorf("%w: the %s speaks TLS and this side does not: configure TLS on both or neither", ErrProtocol, peer)
		}
		return fmt.Errorf("%w: the %s does not start the pool check (not an Ibis-Go peer, or one older than it)", ErrProtocol, peer)
	}
	if b[4] != wireVersion {
		return fmt.Errorf("%w: the %s speaks pool-check version %d, this side %d", ErrProtocol, peer, b[4], wireVersion)
	}
	return nil
}

// tlsRecord says whether b begins a TLS handshake record.
func tlsRecord(b []byte) bool { return b[0] == 0x16 && b[1] == 0x03 }

// readFull reads len(b) bytes, naming the message in its error.
func readFull(r io.Reader, b []byte, what string) error {
	if _, err := io.ReadFull(r, b); err != nil {
		return fmt.Errorf("poolauth: reading the %s: %w", what, err)
	}
	return nil
}
