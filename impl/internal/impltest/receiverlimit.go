package impltest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

// ReceiverLimitRefused checks that a sender keeps to its receiver's message limit when
// that is below its own: a receiver whose Ibis takes at most 64 KiB is sent a 512 KiB
// message by a sender that would take 1 GiB. The write fails with ErrTooLarge naming
// the receive port, and the connection lives on: the message, without the refused
// write, and those before and after it, one near the limit, arrive.
func ReceiverLimitRefused(t *testing.T, impl string, props map[string]string) {
	srv, err := registry.StartEmbedded("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	pool := []ipl.Option{ipl.WithRegistry(srv.Addr()), ipl.WithPool("limit-" + impl)}
	recv := NewIbis(t, impl, props, append(pool, ipl.WithMaxMessageSize(64<<10))...)
	sender := NewIbis(t, impl, props, pool...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rp, err := recv.CreateReceivePort(ctx, dataType, "in")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := sender.CreateSendPort(dataType, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Connect(ctx, recv.Identifier(), "in"); err != nil {
		t.Fatal(err)
	}
	// Each message is a number, then n bytes; a write the limit refuses changes
	// nothing, so Finish sends the message without it.
	send := func(tag int64, n int) error {
		m, err := sp.NewMessage(ctx)
		if err != nil {
			return err
		}
		err = errors.Join(m.WriteInt64(tag), m.WriteArray(make([]byte, n)))
		_, ferr := m.Finish()
		return errors.Join(err, ferr)
	}
	want := func(tag int64, n int) {
		t.Helper()
		m, err := rp.Receive(ctx)
		if err != nil {
			t.Fatalf("receiving message %d: %v", tag, err)
		}
		got, err := m.ReadInt64()
		if err != nil || got != tag {
			t.Errorf("message %d: read %d, %v", tag, got, err)
		}
		if n > 0 {
			if err := m.ReadArray(make([]byte, n)); err != nil {
				t.Errorf("message %d: reading %d bytes: %v", tag, n, err)
			}
		}
		if _, err := m.Finish(); err != nil {
			t.Error(err)
		}
	}
	if err := send(1, 60<<10); err != nil {
		t.Fatalf("a message within the receiver's limit: %v", err)
	}
	err = send(2, 512<<10)
	if !errors.Is(err, ipl.ErrTooLarge) || !strings.Contains(err.Error(), rp.Identifier().String()) {
		t.Errorf("a message over the receiver's limit: %v; want ErrTooLarge naming %s", err, rp.Identifier())
	}
	if err := send(3, 8); err != nil {
		t.Fatalf("a message after the refused write: %v", err)
	}
	want(1, 60<<10)
	want(2, 0)
	want(3, 8)
	if got := len(sp.ConnectedTo()); got != 1 {
		t.Errorf("the send port has %d connections, want 1", got)
	}
}
