package registry

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/ibisgo/ibis/internal/hub"
)

// notRegistryText is what the client says of a server whose first frame is unreadable.
const notRegistryText = "does not speak the registry protocol"

// sessionEnd runs a session over a pipe whose server end writes script, and returns
// why the session ended.
func sessionEnd(t *testing.T, script []byte) error {
	t.Helper()
	cliEnd, srvEnd := net.Pipe()
	defer srvEnd.Close()
	go func() { _, _ = io.Copy(io.Discard, srvEnd) }()
	c, sess := newTestClient(cliEnd, defaultClientConfig())
	defer c.shutdown(ErrClosed)
	if _, err := srvEnd.Write(script); err != nil {
		t.Fatalf("writing to the client: %v", err)
	}
	<-sess.done
	return sess.err
}

// A server whose first frame is unreadable is not a registry (an ibis-hub, an HTTP
// server, ...): the error says so, naming the address, and still matches ErrProtocol
// and ErrRegistryLost.
func TestFirstFrameUnreadableIsNotARegistry(t *testing.T) {
	for name, script := range map[string][]byte{
		"too long":    []byte("HTTP/1.1 400 Bad Request\r\n\r\n"),
		"empty":       {0, 0, 0, 0},
		"undecodable": frameBytes([]byte{0xff, 0xff, 0xff}),
	} {
		err := sessionEnd(t, script)
		if !errors.Is(err, ErrProtocol) || !errors.Is(err, ErrRegistryLost) ||
			!strings.Contains(err.Error(), notRegistryText) || !strings.Contains(err.Error(), "the server at test ") {
			t.Errorf("%s: %v; want ErrProtocol and ErrRegistryLost saying the server at test %s", name, err, notRegistryText)
		}
	}
}

// A bad frame after a good one comes from a registry: it is not called a stranger.
func TestLaterBadFrameIsTheRegistrys(t *testing.T) {
	ping, err := encodeFrame(&message{Kind: kindPing})
	if err != nil {
		t.Fatal(err)
	}
	oversize := binary.BigEndian.AppendUint32(nil, DefaultMaxFrameSize+1)
	err = sessionEnd(t, append(ping, oversize...))
	if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "exceeds the maximum") || strings.Contains(err.Error(), notRegistryText) {
		t.Fatalf("%v; want ErrProtocol for the oversize frame, without %q", err, notRegistryText)
	}
}

// A length prefix that reads as a hub protocol frame says so; another does not.
func TestOversizeFrameNamesTheHubProtocol(t *testing.T) {
	register := []byte{1, 0, 0x3a, 1} // a member's registration at a hub: type 1, 58 bytes, version 1
	_, err := readFrame(strings.NewReader(string(register)), nil, DefaultMaxFrameSize)
	if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "hub protocol") || !strings.Contains(err.Error(), "IBIS_HUB") {
		t.Errorf("a hub registration read as a frame: %v; want ErrProtocol naming the hub protocol and IBIS_HUB", err)
	}
	_, err = readFrame(strings.NewReader("HTTP/1.1"), nil, DefaultMaxFrameSize)
	if !errors.Is(err, ErrProtocol) || strings.Contains(err.Error(), "hub") {
		t.Errorf("an HTTP line read as a frame: %v; want ErrProtocol, not naming the hub protocol", err)
	}
}

// Joining at an ibis-hub, which passes the same pool check, fails saying that the
// server does not speak the registry protocol and probably is a hub.
func TestJoinAtAHub(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := hub.NewServer()
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	defer func() {
		_ = s.Close()
		if err := <-served; !errors.Is(err, hub.ErrClosed) {
			t.Errorf("hub Serve: %v", err)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), internalTimeout)
	defer cancel()
	addr := ln.Addr().String()
	c, err := Join(ctx, addr, "p")
	if err == nil {
		_ = c.Close()
		t.Fatal("joined a pool at a hub")
	}
	if !errors.Is(err, ErrProtocol) || !errors.Is(err, ErrRegistryLost) || !strings.Contains(err.Error(), "the server at "+addr+" "+notRegistryText) ||
		!strings.Contains(err.Error(), "ibis-hub") {
		t.Fatalf("Join at a hub: %v; want ErrProtocol and ErrRegistryLost saying the server at %s %s, probably an ibis-hub", err, addr, notRegistryText)
	}
}
