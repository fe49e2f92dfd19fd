package serialization

// The fixed-size primitives' readers and writers and the array dispatch
// (*_prim_gen.go) come from genprims' table of the typed primitives.
//go:generate go run github.com/ibisgo/ibis/internal/genprims -pkg serialization
