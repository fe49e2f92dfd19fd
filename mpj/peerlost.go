package mpj

import (
	"errors"
	"fmt"

	"github.com/ibisgo/ibis/ipl"
)

// PeerLostError is the failure of a world whose connection from a peer broke: the peer
// died (even by SIGKILL) or the network between them broke. Its text is one short line
// naming both ranks and the last cause ("mpj: rank 2 lost peer rank 1 (it died or the
// connection broke: EOF)"), since every rank of a job prints it; the connection's own
// error (naming both ports) stays reachable as Err, and it matches ipl.ErrConnectionLost.
type PeerLostError struct {
	// Rank and Peer are this process's and the lost peer's world ranks, -1 before the
	// ranks were agreed (Init had not finished).
	Rank, Peer int
	// Member is the lost peer's Ibis.
	Member ipl.IbisIdentifier
	// Err is the connection's error.
	Err error
}

func (e *PeerLostError) Error() string {
	who := fmt.Sprintf("peer rank %d", e.Peer)
	if e.Peer < 0 {
		who = "peer " + e.Member.String()
	}
	me := "mpj"
	if e.Rank >= 0 {
		me = fmt.Sprintf("mpj: rank %d", e.Rank)
	}
	return fmt.Sprintf("%s lost %s (it died or the connection broke: %s)", me, who, rootCause(e.Err))
}

// Unwrap gives the connection's error, and ipl.ErrConnectionLost when that does not
// already match it.
func (e *PeerLostError) Unwrap() []error {
	if errors.Is(e.Err, ipl.ErrConnectionLost) {
		return []error{e.Err}
	}
	return []error{ipl.ErrConnectionLost, e.Err}
}

// rootCause is the text of the innermost error of a chain ("EOF", "connection reset by
// peer"), which is what a reader needs once the ranks are named. Of an error that wraps
// several ("%w: %w", a sentinel and then the cause) it follows the last.
func rootCause(err error) string {
	if err == nil {
		return "no error given"
	}
	for {
		var next error
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			next = u.Unwrap()
		case interface{ Unwrap() []error }:
			if errs := u.Unwrap(); len(errs) > 0 {
				next = errs[len(errs)-1]
			}
		}
		if next == nil {
			return err.Error()
		}
		err = next
	}
}

// peerLost builds the PeerLostError of a broken connection from the process from.
func (w *World) peerLost(from ipl.IbisIdentifier, err error) *PeerLostError {
	e := &PeerLostError{Rank: -1, Peer: -1, Member: from, Err: err}
	if ranks := w.ranks.Load(); ranks != nil {
		e.Rank = (*ranks)[w.slot]
		for s, m := range w.members {
			if m == from {
				e.Peer = (*ranks)[s]
			}
		}
	}
	return e
}
