package ipl

import (
	"flag"
	"io"
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
