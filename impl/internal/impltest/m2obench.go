package impltest

import (
	"context"
	"testing"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// ManyToOneStream is a benchmark: b.N messages of one byte array of size bytes (none
// when size is 0) from a send port into a many-to-one receive port of the same
// instance, as fast as the receiver takes them: what the many-to-one path costs per
// message (whole messages first included, see core.WholeMessageLimit).
//
//	go test -run '^$' -bench ManyToOne -count 10 ./impl/tcp/
func ManyToOneStream(b *testing.B, impl string, props map[string]string, size int) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	opts := []ipl.Option{ipl.WithImplementation(impl), ipl.WithPortTypes(dataType)}
	for k, v := range props {
		opts = append(opts, ipl.WithProperty(k, v))
	}
	ib, err := ipl.New(ctx, opts...)
	if err != nil {
		b.Fatal(err)
	}
	defer ib.Close()
	rp, err := ib.CreateReceivePort(ctx, dataType, "in")
	if err != nil {
		b.Fatal(err)
	}
	sp, err := ib.CreateSendPort(dataType, "")
	if err != nil {
		b.Fatal(err)
	}
	if err := sp.Connect(ctx, ib.Identifier(), "in"); err != nil {
		b.Fatal(err)
	}
	out, in := make([]byte, size), make([]byte, size)
	b.SetBytes(int64(size))
	n := b.N
	sent := make(chan error, 1)
	b.ResetTimer()
	go func() {
		for range n {
			w, err := sp.NewMessage(ctx)
			if err != nil {
				sent <- err
				return
			}
			_ = w.WriteInt32(int32(size))
			if size > 0 {
				_ = w.WriteArray(out)
			}
			if _, err := w.Finish(); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	for range n {
		m, err := rp.Receive(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.ReadInt32(); err != nil {
			b.Fatal(err)
		}
		if size > 0 {
			if err := m.ReadArray(in); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := m.Finish(); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-sent; err != nil {
		b.Fatal(err)
	}
}
