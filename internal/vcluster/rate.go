package vcluster

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseRate reads a link rate as tc writes it: a number and a unit, bit, kbit, mbit or gbit
// (decimal: 1kbit = 1000 bit/s), e.g. "1gbit" or "2.5mbit". The rate is 8 kbit/s at least.
func ParseRate(s string) (uint64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	units := []struct {
		name string
		mult float64
	}{{"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}, {"bit", 1}}
	for _, u := range units {
		num, ok := strings.CutSuffix(t, u.name)
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || strings.ContainsAny(num, "xXpP_") {
			return 0, fmt.Errorf("%w: rate %q: %q is not a number", ErrInvalid, s, num)
		}
		bits := v * u.mult
		if bits < 8000 || bits > 1e13 {
			return 0, fmt.Errorf("%w: rate %q: 8kbit to 10000gbit", ErrInvalid, s)
		}
		return uint64(bits), nil
	}
	return 0, fmt.Errorf("%w: rate %q: want a number and a unit: bit, kbit, mbit or gbit", ErrInvalid, s)
}
