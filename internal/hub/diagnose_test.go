package hub

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/ibisgo/ibis/internal/poolauth"
	"github.com/ibisgo/ibis/internal/testserve"
)

// An empty entry is refused as in a registry address list, naming it, not dropped; a
// missing host is called missing; every error matches ErrBadHubList.
func TestParseHubsSaysWhatIsWrong(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{",", "item 1 is empty"},
		{" , ", "item 1 is empty"},
		{"a:1,,b:2", "item 2 is empty"},
		{"a:1,", "item 2 is empty"},
		{":7700", `":7700" has no host`},
		{"[]:7700", `"[]:7700" has no host`},
		{"a:1,:7700", `":7700" has no host`},
		{strings.Repeat("h", 300) + ":1", "bytes long, at most 255"},
		{"h1", "is not host:port"},
		{"h1:0", "no port number"},
		{"h1:1,h1:1", "named twice"},
	} {
		got, err := ParseHubs(c.in)
		if !errors.Is(err, ErrBadHubList) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseHubs(%q) = %q, %v; want an error wrapping ErrBadHubList that says %q", c.in, got, err, c.want)
		}
	}
}

// LooksLikeFrame recognises the start of every frame of the hub protocol (the registry
// uses it to explain a peer that speaks it), and not a registry frame's length prefix.
func TestLooksLikeFrame(t *testing.T) {
	for typ := frameRegister; typ <= framePing; typ++ {
		for _, n := range []int{0, 1, 58, maxPayload} {
			var b bytes.Buffer
			if err := writeFrame(&b, typ, make([]byte, n)); err != nil {
				t.Fatal(err)
			}
			if !LooksLikeFrame(b.Bytes()) {
				t.Errorf("a frame of type %d with %d bytes: not recognised (% x)", typ, n, b.Bytes()[:3])
			}
		}
	}
	for _, b := range [][]byte{
		binary.BigEndian.AppendUint32(nil, 200),   // a registry frame of 200 bytes
		binary.BigEndian.AppendUint32(nil, 1<<20), // and of 1 MiB
		{frameRegister, 0x20, 0x01},               // a payload over maxPayload
		{framePing + 1, 0, 0},                     // no such type
		{'H', 'T', 'T', 'P'},                      // another protocol
		{frameRegister, 0},                        // too short to tell
	} {
		if LooksLikeFrame(b) {
			t.Errorf("% x taken for a hub frame", b)
		}
	}
}

// A server that passes the pool check and then hangs up without answering (an
// ibis-registry does so when a member takes it for a hub) gives an error that says so,
// rather than a bare EOF.
func TestRegisterAtServerThatHangsUp(t *testing.T) {
	addr := testserve.Serve(t, func(c net.Conn) {
		open := func(string) (poolauth.Secret, bool) { return poolauth.Secret{}, true }
		if _, err := poolauth.Accept(c, open); err != nil {
			return
		}
		var hdr [4]byte // as a registry does: read a length prefix, find it too long, close
		_, _ = io.ReadFull(c, hdr[:])
	})
	_, err := Register(testCtx(t), addr, Registration{Pool: "p", Key: "0123456789abcdef"})
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "not an ibis-hub") {
		t.Fatalf("Register at a server that hangs up: %v; want ErrUnreachable saying it may not be an ibis-hub", err)
	}
}
