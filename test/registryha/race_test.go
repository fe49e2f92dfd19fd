//go:build race

package registryha

// raceEnabled: the tests run with the race detector, and so do the front ends they
// build, whose data races then fail the test that ran them.
const raceEnabled = true
