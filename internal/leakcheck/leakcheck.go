// Package leakcheck holds the goroutine-leak rules the tests share.
package leakcheck

import "go.uber.org/goleak"

// Options are the goleak options every leak check uses. gnet's package initialisation
// starts a worker pool (ants) with two housekeeping goroutines that live as long as
// the process; they exist before any Ibis and are not ours to end, so they are ignored.
// Everything else must be gone when an Ibis has closed.
func Options() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreAnyFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreAnyFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
	}
}
