package core

import "time"

// token is a port's right to a live message: a one-slot semaphore. A send port's
// token is held by its live message and by connection changes (at most one message
// lives, and the connection set does not change under it); a receive port's by
// whoever is taking or reading a message (a Receive, a Poll, the upcall dispatcher)
// and by the live message until it is finished. Holding it is what makes "at most one
// live message per port" true; every wait for it also ends when one of its abort
// channels closes, so no caller waits past the port's or the Ibis's end. A receive port
// with concurrent upcalls has one slot per upcall (concurrent.go).
type token chan struct{}

func newToken() token { return make(token, 1) }

// tryTake takes the token if it is free and reports whether it did.
func (t token) tryTake() bool {
	select {
	case t <- struct{}{}:
		return true
	default:
		return false
	}
}

// take waits for the token until a or b closes (a nil channel never does) and
// reports whether it got it. A free token is taken without a select over all three,
// which costs a message several times as much; so a free token is taken even when a
// or b has already closed (a caller that must honour a cancelled context checks it).
func (t token) take(a, b <-chan struct{}) bool {
	select {
	case t <- struct{}{}:
		return true
	default:
	}
	select {
	case t <- struct{}{}:
		return true
	case <-a:
		return false
	case <-b:
		return false
	}
}

// takeWithin waits up to d for the token and reports whether it got it.
func (t token) takeWithin(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case t <- struct{}{}:
		return true
	case <-timer.C:
		return false
	}
}

// release gives the token back; only its holder calls it.
func (t token) release() { <-t }
