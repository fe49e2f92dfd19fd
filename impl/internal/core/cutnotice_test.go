package core

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/ipl"
)

// A cut notice travels as 9 bytes and comes back as the number taken; anything else a
// receiver writes is named as unexpected.
func TestCutNoticeRoundTrip(t *testing.T) {
	var rc *ReceiverCut
	if err := ParseCutNotice(cutNotice(6001)); !errors.As(err, &rc) || rc.Taken != 6001 {
		t.Fatalf("notice of 6001: %v", err)
	}
	if err := ParseCutNotice([]byte("GARBAGE!!")); errors.As(err, &rc) || !strings.Contains(err.Error(), "unexpected") {
		t.Fatalf("garbage: %v, want an unexpected-data error", err)
	}
	if err := ParseCutNotice(cutNotice(1)[:4]); errors.As(err, &rc) {
		t.Fatalf("a cut-off notice was taken for one: %v", err)
	}
}

// A send port holds a receiver's cut notice against the messages its Finish handed to
// that connection: fewer taken is reported once, naming the receiver and the number
// thrown away; all taken is no error.
func TestCutNoticeHeldAgainstHandedMessages(t *testing.T) {
	sp := &SendPort{log: zap.NewNop()}
	short := &sendConn{sp: sp, to: ipl.ReceivePortIdentifier{Name: "short"}, c: closingConn{}, sent: 10}
	whole := &sendConn{sp: sp, to: ipl.ReceivePortIdentifier{Name: "whole"}, c: closingConn{}, sent: 4}
	for _, c := range []struct {
		oc    *sendConn
		taken uint64
	}{{short, 7}, {whole, 4}} {
		c.oc.peerEnded(fmt.Errorf("%w: %w: %w", ipl.ErrConnectionLost, ErrReceiverEnded, &ReceiverCut{Taken: c.taken}))
	}
	err := sp.takeCuts(nil)
	var ce *ipl.ConnectionError
	if !errors.Is(err, ipl.ErrConnectionLost) || !errors.As(err, &ce) || ce.To.Name != "short" ||
		!strings.Contains(err.Error(), "after taking 7") || !strings.Contains(err.Error(), "the last 3 were thrown away") {
		t.Fatalf("takeCuts = %v, want the loss of 3 messages at short", err)
	}
	if strings.Contains(err.Error(), "to whole@") {
		t.Errorf("takeCuts reported a receiver that took every message: %v", err)
	}
	if err := sp.takeCuts(nil); err != nil {
		t.Errorf("a second takeCuts = %v, want nil (reported once)", err)
	}
}
