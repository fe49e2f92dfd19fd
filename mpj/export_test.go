package mpj

// SetFlat turns the flat algorithms for small messages (small.go) on or off, so that
// the suite runs the trees and the dissemination barrier on small pools too. Every
// rank must call it at the same point, between collectives.
func SetFlat(on bool) {
	if on {
		flatLimits.bytes, flatLimits.procs = flatMaxBytes, flatMaxProcs
	} else {
		flatLimits.bytes, flatLimits.procs = -1, 0
	}
}
