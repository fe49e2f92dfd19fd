package applaunch

import (
	"os"
	"os/signal"
	"syscall"
)

// interruptWatch notes the first SIGINT or SIGTERM that reaches the launcher while its pool
// runs, so that Local can exit as a shell reports a process killed by that signal (130 for
// Ctrl-C), as cmd/ibis-run does, instead of with the status of a process it stopped. The
// applications divert these two signals to their context already (signal.NotifyContext);
// watching them here changes nothing else, and no goroutine is needed: the channel keeps
// the first.
type interruptWatch struct{ ch chan os.Signal }

func watchInterrupts() *interruptWatch {
	w := &interruptWatch{ch: make(chan os.Signal, 1)}
	signal.Notify(w.ch, os.Interrupt, syscall.SIGTERM)
	return w
}

// stop ends the watch and returns the signal received, if any.
func (w *interruptWatch) stop() (syscall.Signal, bool) {
	signal.Stop(w.ch)
	select {
	case s := <-w.ch:
		sig, ok := s.(syscall.Signal)
		return sig, ok
	default:
		return 0, false
	}
}
