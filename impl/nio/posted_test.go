package nio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/ibisgo/ibis/impl/internal/core"
	"github.com/ibisgo/ibis/internal/poolauth"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/serialization"
)

// postedSizes are the byte arrays of TestLargeArraysArriveWhole's messages: below and
// above the size a read is posted at, across FillFrom's buffers and its limit per
// call, and larger than the inbox's high water.
var postedSizes = []int{70_000, 1<<20 + 13, 100, 3<<20 + 5, 256 << 10, 0}

// postedByte is byte k of the array of sender s's message i.
func postedByte(s, i, k int) byte { return byte(s*131 + i*17 + k + k>>8) }

// TestLargeArraysArriveWhole: two senders pour messages with large arrays into one
// nonblocking or thread-flavour receive port, which the event loop reads into posted
// slices and its own buffers (descriptor.go); every message arrives whole, in each
// sender's order. The receiver sometimes dawdles before reading an array, so that the
// event loop buffers its start before the read is posted.
func TestLargeArraysArriveWhole(t *testing.T) {
	for _, recv := range []string{"nonblocking", "thread"} {
		for _, send := range []string{"blocking", "nonblocking"} {
			t.Run(send+"/"+recv, func(t *testing.T) { largeArrays(t, send, recv) })
		}
	}
}

func largeArrays(t *testing.T, send, recv string) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	ib, rp := openWithIn(ctx, t, flowType, ipl.WithProperty(PropertyReceive, recv), ipl.WithProperty(PropertySend, send),
		ipl.WithMaxMessageSize(8<<20))
	const senders, messages = 2, 12
	var wg sync.WaitGroup
	errs := make(chan error, senders)
	for s := range senders {
		sp := sendToIn(ctx, t, ib, flowType, fmt.Sprintf("out%d", s))
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- sendLargeArrays(ctx, sp, s, messages)
		}()
	}
	next := make([]int, senders)
	for r := range senders * messages {
		m, err := rp.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := m.ReadInt32()
		i, _ := m.ReadInt32()
		n, err := m.ReadInt32()
		if err != nil || s < 0 || s >= senders || int(i) != next[s] {
			t.Fatalf("got message %d of sender %d (want %d): %v", i, s, next[s], err)
		}
		next[s]++
		if r%3 == 1 {
			time.Sleep(20 * time.Millisecond) // the event loop buffers meanwhile
		}
		data := make([]byte, n)
		if err := m.ReadArray(data); err != nil {
			t.Fatalf("sender %d message %d: %v", s, i, err)
		}
		for k := range data {
			if data[k] != postedByte(int(s), int(i), k) {
				t.Fatalf("sender %d message %d: byte %d of %d is %d, want %d", s, i, k, n, data[k], postedByte(int(s), int(i), k))
			}
		}
		if end, err := m.ReadInt32(); end != -i || err != nil {
			t.Fatalf("sender %d message %d: trailer %d, %v", s, i, end, err)
		}
		if _, err := m.Finish(); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	for range senders {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// sendLargeArrays sends the messages TestLargeArraysArriveWhole checks, then closes sp.
func sendLargeArrays(ctx context.Context, sp ipl.SendPort, s, messages int) error {
	for i := range messages {
		w, err := sp.NewMessage(ctx)
		if err != nil {
			return err
		}
		data := make([]byte, postedSizes[i%len(postedSizes)])
		for k := range data {
			data[k] = postedByte(s, i, k)
		}
		_ = w.WriteInt32(int32(s))
		_ = w.WriteInt32(int32(i))
		_ = w.WriteInt32(int32(len(data)))
		_ = w.WriteArray(data)
		_ = w.WriteInt32(int32(-i))
		if _, err := w.Finish(); err != nil {
			return err
		}
	}
	return sp.Close()
}

// TestPostedReadPeerGone: a hand-made sender sends the start of a message, then,
// once the receiver waits for the array (its read posted), half of the array, and
// goes away in each way a peer can: it closes the socket (a killed process's socket is closed by its kernel),
// resets it, stops sending (the stall watchdog cuts it), or the receive port closes.
// ReadArray returns the matching error instead of waiting, and the half that came is
// not taken for a whole.
func TestPostedReadPeerGone(t *testing.T) {
	for _, how := range []string{"close", "reset", "stall", "port-close"} {
		t.Run(how, func(t *testing.T) {
			for _, recv := range []string{"nonblocking", "thread"} {
				postedPeerGone(t, how, recv)
			}
		})
	}
}

func postedPeerGone(t *testing.T, how, recv string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ib, rp := openWithIn(ctx, t, flowType, ipl.WithProperty(PropertyReceive, recv), ipl.WithMaxMessageSize(8<<20),
		ipl.WithMessageTimeout(time.Second))
	c := dialRaw(t, ib, "gone")
	defer c.Close()
	const size = 4 << 20
	msg := messageBytes(t, size)
	// More than core.WholeMessageLimit, so that the many-to-one port hands the
	// message out before it is whole.
	const first = core.WholeMessageLimit + 44<<10
	if _, err := c.Write(msg[:first]); err != nil {
		t.Fatal(err)
	}
	m, err := rp.Receive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	read := make(chan error, 1)
	dst := make([]byte, size)
	go func() { read <- m.ReadArray(dst) }()
	time.Sleep(100 * time.Millisecond) // the reader has taken what came and posted the rest
	// More comes, into the posted slice, and the end right behind it: the event loop
	// meets the end in its own read of the socket.
	if _, err := c.Write(msg[first : 2<<20]); err != nil {
		t.Fatal(err)
	}
	var want error
	switch how {
	case "close":
		_ = c.Close()
		want = ipl.ErrConnectionLost
	case "reset":
		_ = c.(*net.TCPConn).SetLinger(0)
		_ = c.Close()
		want = ipl.ErrConnectionLost
	case "stall":
		want = ipl.ErrStalled
	case "port-close":
		_ = rp.Close()
		want = ipl.ErrClosed
	}
	select {
	case err := <-read:
		if !errors.Is(err, want) {
			t.Errorf("%s (%s): ReadArray: %v, want %v", how, recv, err, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("%s (%s): ReadArray still waits", how, recv)
	}
	if _, err := m.Finish(); err == nil {
		t.Errorf("%s (%s): Finish of the half message reported no error", how, recv)
	}
}

// dialRaw connects a hand-made send port called name to ib's receive port "in".
func dialRaw(t *testing.T, ib ipl.Ibis, name string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", ib.Identifier().Address)
	if err != nil {
		t.Fatal(err)
	}
	if err := poolauth.Dial(c, ib.Identifier().Pool, poolauth.Secret{}); err != nil {
		t.Fatal(err)
	}
	req := &core.Request{From: ipl.SendPortIdentifier{Ibis: ib.Identifier(), Name: name}, To: "in", PortType: flowType.String()}
	if err := core.WriteRequest(c, req); err != nil {
		t.Fatal(err)
	}
	if rep, err := core.ReadReply(c); err != nil || rep.Code != core.ReplyAccepted {
		t.Fatalf("handshake: %+v %v", rep, err)
	}
	return c
}

// messageBytes is the wire form of a message holding one byte array of size bytes.
func messageBytes(t *testing.T, size int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := serialization.NewWriter(serialization.KindData, serialization.NewStreamSink(&buf))
	if err := w.WriteArray(make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
