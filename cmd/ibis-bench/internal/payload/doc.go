// Package payload defines the data that ibis-bench experiments move through Ibis
// messages — typed slices, 2-D slices, slices of small objects, a binary tree of
// objects — so that both ends of a connection can build the same payload from a
// short Spec sent ahead of it, write it, read it back into preallocated memory and
// check that it arrived intact.
package payload
