package ipl

import "fmt"

// ConnectionError is the loss of one connection of a send port: which one, and why. A
// multicast that loses connections reports one ConnectionError per lost receive port,
// joined (errors.Join), so that a program can tell which peers failed with errors.As
// (for one) or by walking the joined errors (for all); every one also matches
// ErrConnectionLost with errors.Is.
type ConnectionError struct {
	From SendPortIdentifier    // the send port
	To   ReceivePortIdentifier // the receive port the connection went to
	Err  error                 // why it was lost; it matches ErrConnectionLost
}

// Error says which connection was lost and why.
func (e *ConnectionError) Error() string {
	return fmt.Sprintf("connection from %s to %s: %v", e.From, e.To, e.Err)
}

// Unwrap gives the cause, for errors.Is and errors.As.
func (e *ConnectionError) Unwrap() error { return e.Err }
