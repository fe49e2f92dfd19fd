// Package figure holds what the repository's plots share (cmd/ibis-bench -plot,
// cmd/speedplot, the sor heat map and the barneshut frames): tick markers that label
// several ticks on every axis, log or linear, and saving with the legend or a colour
// bar beside the data rather than on top of it.
//
// The programs build their gonum plots themselves; this package only makes them
// readable and writes them.
package figure
