package core

// The forwarding of a message's typed calls to its serialization stream
// (forward.go) comes from genprims' table of the typed primitives.
//go:generate go run github.com/ibisgo/ibis/internal/genprims -pkg core
