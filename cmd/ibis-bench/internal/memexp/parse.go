package memexp

import (
	"fmt"
	"strconv"
	"strings"
)

// The helpers below turn the comma-separated lists of command-line flags
// into parameters, with errors wrapping ErrInvalid that name the bad item.

// ParseSize turns a size such as "64", "64B", "8K", "8KB", "100KiB" or
// "1M" into bytes. K and M are binary (1024 and 1024*1024), as in the
// thesis' "8KB" and "100K" arrays.
func ParseSize(s string) (int, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := 1
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	switch {
	case strings.HasSuffix(t, "K"):
		mult, t = 1<<10, strings.TrimSuffix(t, "K")
	case strings.HasSuffix(t, "M"):
		mult, t = 1<<20, strings.TrimSuffix(t, "M")
	}
	n, err := strconv.Atoi(strings.TrimSpace(t))
	if err != nil || n < 0 || n > MaxBytes/mult {
		return 0, fmt.Errorf("%w: size %q, want a byte count such as 64, 8K or 100K, at most %d bytes", ErrInvalid, s, MaxBytes)
	}
	return n * mult, nil
}

// ParseSizes parses a comma-separated list of sizes (see ParseSize).
func ParseSizes(list string) ([]int, error) { return parseList(list, "sizes", ParseSize) }

// ParseElems parses a comma-separated list of element types (see
// ParseElem).
func ParseElems(list string) ([]Elem, error) { return parseList(list, "element types", ParseElem) }

// ParseMethods parses a comma-separated list of conversion methods (see
// ParseMethod).
func ParseMethods(list string) ([]Method, error) {
	return parseList(list, "conversion methods", ParseMethod)
}

// ParseOrders parses a comma-separated list of "native" and "swapped".
func ParseOrders(list string) ([]Order, error) {
	return parseList(list, "byte orders", func(s string) (Order, error) {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "native":
			return OrderNative, nil
		case "swapped":
			return OrderSwapped, nil
		}
		return 0, fmt.Errorf("%w: byte order %q, want native or swapped", ErrInvalid, s)
	})
}

func parseList[T any](list, what string, parse func(string) (T, error)) ([]T, error) {
	if strings.TrimSpace(list) == "" {
		return nil, fmt.Errorf("%w: empty list of %s", ErrInvalid, what)
	}
	var out []T
	for item := range strings.SplitSeq(list, ",") {
		v, err := parse(item)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// FormatSize writes a byte count the way ParseSize reads it, for labels:
// "64 B", "8 KiB", "100 KiB", "1 MiB", or plain bytes when not a whole
// multiple.
func FormatSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}
