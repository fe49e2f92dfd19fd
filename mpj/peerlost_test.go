package mpj

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/ibisgo/ibis/ipl"
)

// TestPeerLostError: the text is one short line naming the ranks and the innermost cause;
// the error matches ipl.ErrConnectionLost and keeps the connection's error.
func TestPeerLostError(t *testing.T) {
	cause := fmt.Errorf("%w: connection from a to b: %w", ipl.ErrConnectionLost, io.EOF)
	e := &PeerLostError{Rank: 3, Peer: 1, Err: cause}
	if got, want := e.Error(), "mpj: rank 3 lost peer rank 1 (it died or the connection broke: EOF)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if !errors.Is(e, ipl.ErrConnectionLost) || !errors.Is(e, io.EOF) {
		t.Error("does not match ipl.ErrConnectionLost and its cause")
	}
	bare := &PeerLostError{Rank: -1, Peer: -1, Member: ipl.IbisIdentifier{Pool: "p", ID: "4", Address: "x:1"}, Err: io.ErrUnexpectedEOF}
	if got, want := bare.Error(), "mpj lost peer p/4@x:1 (it died or the connection broke: unexpected EOF)"; got != want {
		t.Errorf("before the ranks: %q, want %q", got, want)
	}
	if !errors.Is(bare, ipl.ErrConnectionLost) {
		t.Error("a cause that is not ErrConnectionLost: the error does not match it")
	}
}

// TestWaitAllOneFailure: requests that all failed with the world's one error give it once,
// naming them; different errors stay apart.
func TestWaitAllOneFailure(t *testing.T) {
	world := &PeerLostError{Rank: 0, Peer: 1, Err: io.EOF}
	if got, want := requestErrors([]int{0, 1}, []error{world, world}).Error(),
		"requests [0 1]: mpj: rank 0 lost peer rank 1 (it died or the connection broke: EOF)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	err := requestErrors([]int{0, 2}, []error{io.EOF, io.ErrClosedPipe})
	if got, want := err.Error(), "request 0: EOF\nrequest 2: io: read/write on closed pipe"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if requestErrors(nil, nil) != nil {
		t.Error("no failure gave an error")
	}
}
