//go:build !unix

package dc_test

import "time"

// cpuTime cannot be read here.
func cpuTime() (time.Duration, bool) { return 0, false }
