package launchenv

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrHostlist is matched by every error of the hostlist parser.
var ErrHostlist = errors.New("launchenv: bad SLURM hostlist")

// Bounds of the hostlist parser: SLURM's own lists are far smaller.
const (
	maxHostlistBytes = 1 << 16
	maxNumberDigits  = 9
)

// hostItem is one comma-separated item of a hostlist: literal text and bracketed
// ranges in turn, e.g. "rack" [1-2] "-n" [01-04,07].
type hostItem struct{ parts []hostPart }

// hostPart is a literal (ranges nil) or a bracket of ranges.
type hostPart struct {
	lit    string
	ranges []numRange
}

// numRange is lo..hi, printed with at least width digits (SLURM keeps the zero
// padding of the lower bound: [01-10] gives 01, 02, ..., 10).
type numRange struct{ lo, hi, width int }

// Hostlist is a parsed SLURM hostlist such as "node[01-04,07],gpu[1-2]".
type Hostlist struct{ items []hostItem }

// ParseHostlist parses SLURM's hostlist syntax: comma-separated items, each literal
// host-name characters with bracketed lists of numbers and ranges ([01-04,07]); several
// brackets in one item multiply. It rejects empty items, unbalanced or nested brackets,
// descending ranges and characters a host name cannot hold, saying where.
func ParseHostlist(s string) (Hostlist, error) {
	if s == "" {
		return Hostlist{}, fmt.Errorf("%w: empty", ErrHostlist)
	}
	if len(s) > maxHostlistBytes {
		return Hostlist{}, fmt.Errorf("%w: %d bytes, more than %d", ErrHostlist, len(s), maxHostlistBytes)
	}
	var hl Hostlist
	var cur hostItem
	var lit strings.Builder
	flushLit := func() {
		if lit.Len() > 0 {
			cur.parts = append(cur.parts, hostPart{lit: lit.String()})
			lit.Reset()
		}
	}
	endItem := func(at int) error {
		flushLit()
		if len(cur.parts) == 0 {
			return fmt.Errorf("%w: empty host name at byte %d of %q", ErrHostlist, at, s)
		}
		hl.items = append(hl.items, cur)
		cur = hostItem{}
		return nil
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ',':
			if err := endItem(i); err != nil {
				return Hostlist{}, err
			}
		case c == '[':
			end := strings.IndexByte(s[i:], ']')
			if end < 0 {
				return Hostlist{}, fmt.Errorf("%w: '[' at byte %d of %q is never closed", ErrHostlist, i, s)
			}
			ranges, err := parseRanges(s[i+1 : i+end])
			if err != nil {
				return Hostlist{}, fmt.Errorf("%w: bracket at byte %d of %q: %w", ErrHostlist, i, s, err)
			}
			flushLit()
			cur.parts = append(cur.parts, hostPart{ranges: ranges})
			i += end
		case c == ']':
			return Hostlist{}, fmt.Errorf("%w: ']' at byte %d of %q closes no '['", ErrHostlist, i, s)
		case isHostChar(c):
			lit.WriteByte(c)
		default:
			return Hostlist{}, fmt.Errorf("%w: %q at byte %d of %q cannot be in a host name", ErrHostlist, c, i, s)
		}
	}
	if err := endItem(len(s)); err != nil {
		return Hostlist{}, err
	}
	return hl, nil
}

func isHostChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_'
}

// parseRanges parses the inside of a bracket: "01-04,07".
func parseRanges(s string) ([]numRange, error) {
	if s == "" {
		return nil, errors.New("empty brackets")
	}
	var out []numRange
	for r := range strings.SplitSeq(s, ",") {
		loS, hiS, isRange := strings.Cut(r, "-")
		lo, err := parseNumber(loS)
		if err != nil {
			return nil, err
		}
		hi := lo
		if isRange {
			if hi, err = parseNumber(hiS); err != nil {
				return nil, err
			}
			if hi < lo {
				return nil, fmt.Errorf("range %q descends", r)
			}
		}
		out = append(out, numRange{lo: lo, hi: hi, width: len(loS)})
	}
	return out, nil
}

func parseNumber(s string) (int, error) {
	if s == "" {
		return 0, errors.New("missing number")
	}
	if len(s) > maxNumberDigits {
		return 0, fmt.Errorf("number %q has more than %d digits", s, maxNumberDigits)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%q is not a number", s)
		}
	}
	return strconv.Atoi(s)
}

// First returns the list's first host, as SLURM orders it (the first step node).
func (hl Hostlist) First() string {
	if len(hl.items) == 0 {
		return ""
	}
	var b strings.Builder
	for _, p := range hl.items[0].parts {
		if p.ranges == nil {
			b.WriteString(p.lit)
			continue
		}
		r := p.ranges[0]
		fmt.Fprintf(&b, "%0*d", r.width, r.lo)
	}
	return b.String()
}

// Expand returns every host of the list in order; more than limit hosts is an error,
// so that a short list such as "n[0-999999999]" costs nothing.
func (hl Hostlist) Expand(limit int) ([]string, error) {
	var out []string
	for _, it := range hl.items {
		names := []string{""}
		for _, p := range it.parts {
			if p.ranges == nil {
				for i := range names {
					names[i] += p.lit
				}
				continue
			}
			n := 0
			for _, r := range p.ranges {
				n += r.hi - r.lo + 1
			}
			if n > limit || len(names)*n+len(out) > limit {
				return nil, fmt.Errorf("%w: more than %d hosts", ErrHostlist, limit)
			}
			next := make([]string, 0, len(names)*n)
			for _, prefix := range names {
				for _, r := range p.ranges {
					for v := r.lo; v <= r.hi; v++ {
						next = append(next, fmt.Sprintf("%s%0*d", prefix, r.width, v))
					}
				}
			}
			names = next
		}
		if len(out)+len(names) > limit {
			return nil, fmt.Errorf("%w: more than %d hosts", ErrHostlist, limit)
		}
		out = append(out, names...)
	}
	return out, nil
}
