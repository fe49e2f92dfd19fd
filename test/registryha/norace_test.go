//go:build !race

package registryha

const raceEnabled = false
