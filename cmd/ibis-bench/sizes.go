package main

import (
	"fmt"
	"strconv"
	"strings"
)

// powersOfFour returns 0 and 4^k bytes up to max, the message sizes of the
// ping-pong test.
func powersOfFour(max int) []int {
	out := []int{0}
	for n := 1; n <= max; n *= 4 {
		out = append(out, n)
	}
	return out
}

// parseInts parses a comma-separated list of non-negative integers, each optionally
// suffixed K, M (powers of 1024).
func parseInts(flagName, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		mult := 1
		switch {
		case strings.HasSuffix(f, "K"), strings.HasSuffix(f, "k"):
			mult, f = 1<<10, f[:len(f)-1]
		case strings.HasSuffix(f, "M"), strings.HasSuffix(f, "m"):
			mult, f = 1<<20, f[:len(f)-1]
		}
		v, err := strconv.Atoi(f)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("%w: -%s: %q is not a non-negative integer", errUsage, flagName, f)
		}
		out = append(out, v*mult)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: -%s is empty", errUsage, flagName)
	}
	return out, nil
}

// parseList splits a comma-separated list.
func parseList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
