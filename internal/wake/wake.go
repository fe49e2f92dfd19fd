// Package wake is the one way the runtime nudges a goroutine that waits on a channel of
// capacity one: a send that never blocks, and that leaves at most one wake-up pending
// however often it is made, so that the waiter looks again at least once after every
// call and a burst of news costs it one round.
package wake

// Poke sends on ch unless a wake-up is already pending in it (ch has capacity one).
// It never blocks.
func Poke(ch chan<- struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
