package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// Bounds on the flags, so that a typo fails at once instead of exhausting memory.
const (
	maxPorts    = 10000
	maxValues   = 1 << 24 // 128 MiB of int64 per message
	maxMessages = 1 << 40
)

// settings are the parsed flags. Every process of a pool must be given the same ones.
type settings struct {
	ports        int
	messages     int64
	values       int
	oneByOne     bool
	consumeDelay time.Duration
	consumeEvery int
	consumeSpin  bool
	json         bool
	timeout      time.Duration
	stall        time.Duration
	ibisOptions  func() []ipl.Option
}

// newSettings registers the flags (with the common Ibis flags) on fs.
func newSettings(fs *flag.FlagSet) *settings {
	s := &settings{ibisOptions: ipl.Flags(fs)}
	fs.IntVar(&s.ports, "ports", 1, "send ports per sender process, each connected to the receiver")
	fs.Int64Var(&s.messages, "messages", 1000, "messages per send port")
	fs.IntVar(&s.values, "values", 8, "int64 values per message")
	fs.BoolVar(&s.oneByOne, "one-by-one", false, "write (and read) the values one by one with WriteInt64 instead of one WriteArray")
	fs.DurationVar(&s.consumeDelay, "consume-delay", 0, "make the consumer slow: sleep this long every -consume-every received messages")
	fs.IntVar(&s.consumeEvery, "consume-every", 1, "received messages per -consume-delay sleep")
	fs.BoolVar(&s.consumeSpin, "consume-spin", false, "busy-wait the -consume-delay instead of sleeping (a sleep takes much longer than a few µs)")
	fs.BoolVar(&s.json, "json", false, "also print the result as one JSON line on stdout")
	fs.DurationVar(&s.timeout, "timeout", 30*time.Minute, "give up after this long")
	fs.DurationVar(&s.stall, "stall", 2*time.Minute, "the receiver gives up when no message has come for this long")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: ibis-run -np N [-impl tcp|nio] -- ibis-load [flags]

One process of the pool is elected receiver; the N-1 others each send -messages numbered
messages of -values int64 values from each of -ports send ports into the receiver's one
many-to-one port. The receiver checks that nothing is lost and every send port's messages
arrive in order and intact, and prints the result; it exits with status 3 if not.

Flags:
`)
		fs.PrintDefaults()
	}
	return s
}

// validate checks the flags.
func (s *settings) validate() error {
	var errs []error
	if s.ports < 1 || s.ports > maxPorts {
		errs = append(errs, fmt.Errorf("-ports %d: want 1 to %d", s.ports, maxPorts))
	}
	if s.messages < 0 || s.messages > maxMessages {
		errs = append(errs, fmt.Errorf("-messages %d: want 0 to %d", s.messages, int64(maxMessages)))
	}
	if s.values < 0 || s.values > maxValues {
		errs = append(errs, fmt.Errorf("-values %d: want 0 to %d", s.values, maxValues))
	}
	if s.consumeDelay < 0 {
		errs = append(errs, fmt.Errorf("-consume-delay %v: want a duration of 0 or more", s.consumeDelay))
	}
	if s.consumeEvery < 1 {
		errs = append(errs, fmt.Errorf("-consume-every %d: want at least 1", s.consumeEvery))
	}
	if s.timeout <= 0 || s.stall <= 0 {
		errs = append(errs, fmt.Errorf("-timeout %v, -stall %v: want positive durations", s.timeout, s.stall))
	}
	return errors.Join(errs...)
}

// nioReceive is the nio receive flavour asked for by property or environment, for the
// report: "" when none was. (A many-to-one port stays non-blocking when blocking is asked.)
func (s *settings) nioReceive() string {
	var c ipl.Config
	for _, o := range s.ibisOptions() {
		o(&c)
	}
	if f := c.Property("nio.receive"); f != "" {
		return f
	}
	return os.Getenv("IBIS_NIO_RECEIVE")
}
