package ipl

import (
	"flag"
	"io"
	"strings"
	"testing"
)

func TestFlagsProperty(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	opts := Flags(fs)
	if err := fs.Parse([]string{"-impl", "nio", "-property", "nio.send=thread", "-property", "nio.receive=nonblocking"}); err != nil {
		t.Fatal(err)
	}
	var c Config
	for _, o := range opts() {
		o(&c)
	}
	if c.Implementation != "nio" || c.Property("nio.send") != "thread" || c.Property("nio.receive") != "nonblocking" {
		t.Errorf("flags gave %+v", c)
	}
	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	Flags(fs)
	if err := fs.Parse([]string{"-property", "novalue"}); err == nil {
		t.Error("-property without = was accepted")
	}
}

// -pool-size takes a count: set, it gives the option; negative or not a number, the parse
// fails saying so (as $IBIS_POOL_SIZE does), where -1 used to be taken as "unset".
func TestFlagsPoolSize(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	opts := Flags(fs)
	if err := fs.Parse([]string{"-pool-size", "4"}); err != nil {
		t.Fatal(err)
	}
	var c Config
	for _, o := range opts() {
		o(&c)
	}
	if c.PoolSize != 4 {
		t.Errorf("-pool-size 4 gave a pool size of %d", c.PoolSize)
	}
	for _, bad := range []string{"-1", "four"} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		Flags(fs)
		if err := fs.Parse([]string{"-pool-size", bad}); err == nil || !strings.Contains(err.Error(), "want a non-negative integer") {
			t.Errorf("-pool-size %s: %v, want it refused", bad, err)
		}
	}
}
