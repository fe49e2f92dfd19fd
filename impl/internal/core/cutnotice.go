package core

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The cut notice. After the handshake a receiver writes nothing on a connection, with
// one exception: before it cuts a connection (its sender was declared dead, or stalled
// in the middle of a message; stall.go) it writes CutNoticeSize bytes, the letter 'X'
// and the number of whole messages its port took from the connection (big-endian
// uint64). The sender's transport reads them (sockets.Watch, nio's queued connection)
// and ends the connection with a *ReceiverCut, so that the send port can tell which of
// the messages whose Finish returned nil were thrown away (sendport.go). A receiver that
// cannot write it (a crashed process, a broken network) leaves the sender with a plain
// loss, as before.
const (
	cutNoticeMark = 'X'
	// CutNoticeSize is the size of a cut notice on the wire.
	CutNoticeSize = 9
)

// ErrReceiverEnded marks the end of a sender's connection that its transport saw come
// from the receiving side (a cut notice, the receiver's close or reset, read from the
// socket), as opposed to a failed write: once a send port has heard it, nothing more
// the receiver wrote can be waiting unread. On a relayed connection that side is the
// hub as well as the receiver (a hub that died closes it too), so the text blames
// neither.
var ErrReceiverEnded = errors.New("ended from the receiving side")

// CutNotifier is implemented by incoming connections that can send their sender a cut
// notice before they are closed. The write must not wait long (a second at most): the
// socket's send buffer is empty (a receiver writes nothing else), so in practice it
// never waits.
type CutNotifier interface {
	NotifyCut(notice []byte)
}

// ReceiverCut is why a sender's connection ended when its receiver cut it and said how
// many whole messages it had taken from it.
type ReceiverCut struct {
	Taken uint64
}

func (e *ReceiverCut) Error() string {
	return fmt.Sprintf("the receiver cut the connection after taking %d whole messages from it", e.Taken)
}

// cutNotice encodes a notice for taken messages.
func cutNotice(taken uint64) []byte {
	b := make([]byte, CutNoticeSize)
	b[0] = cutNoticeMark
	binary.BigEndian.PutUint64(b[1:], taken)
	return b
}

// ReadCutNotice decodes what a receiver wrote after the handshake: first is its first
// byte and r gives the rest. It returns the *ReceiverCut of a notice, or an error that
// says the receiver sent something else.
func ReadCutNotice(first byte, r io.Reader) error {
	if first != cutNoticeMark {
		return fmt.Errorf("the receiver sent unexpected data (byte %#x)", first)
	}
	var n [CutNoticeSize - 1]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return fmt.Errorf("the receiver began a cut notice and broke off: %w", err)
	}
	return &ReceiverCut{Taken: binary.BigEndian.Uint64(n[:])}
}

// ParseCutNotice decodes a whole notice held in b (len(b) == CutNoticeSize).
func ParseCutNotice(b []byte) error {
	if len(b) < 1 {
		return errors.New("the receiver sent an empty notice")
	}
	return ReadCutNotice(b[0], bytes.NewReader(b[1:]))
}
