package nio

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ibisgo/ibis/ipl"
)

// gnet's own log lines go to the Ibis logger; nothing reaches stdout, where a program
// prints its results.
func TestGnetLogsThroughZap(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	defer func() { os.Stdout = stdout }()
	printed := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(r)
		printed <- string(b)
	}()

	core, logs := observer.New(zapcore.DebugLevel)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ib, err := ipl.New(ctx, ipl.WithImplementation(Name), ipl.WithPortTypes(flowType), ipl.WithLogger(zap.New(core)))
	if err != nil {
		t.Fatal(err)
	}
	if err := ib.Close(); err != nil {
		t.Fatal(err)
	}
	os.Stdout = stdout
	_ = w.Close()
	if out := <-printed; out != "" {
		t.Errorf("stdout got %q", out)
	}
	found := false
	for _, e := range logs.All() {
		if strings.Contains(e.Message, "gnet") {
			found = true
		}
	}
	if !found {
		t.Errorf("no gnet message reached the zap logger (%d entries)", logs.Len())
	}
}
