package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// WriteText writes every table of the report as aligned columns, each followed by its
// notes, then the report's values. Numeric columns are right-aligned.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	for i, t := range r.Tables {
		if i > 0 {
			b.WriteByte('\n')
		}
		writeTable(&b, t)
	}
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("report: writing text: %w", err)
	}
	return nil
}

func writeTable(b *strings.Builder, t *Table) {
	if t.Title != "" {
		b.WriteString(t.Title)
		b.WriteByte('\n')
	}
	ncol := len(t.Columns)
	for _, row := range t.Rows {
		ncol = max(ncol, len(row))
	}
	cells := make([][]string, 0, len(t.Rows)+1)
	head := make([]string, ncol)
	copy(head, t.Columns)
	cells = append(cells, head)
	numeric := make([]bool, ncol)
	for c := range numeric {
		numeric[c] = len(t.Rows) > 0
	}
	for _, row := range t.Rows {
		line := make([]string, ncol)
		for c := range ncol {
			if c < len(row) {
				line[c] = FormatCell(row[c])
				if _, ok := row[c].(string); ok {
					numeric[c] = false
				}
			}
		}
		cells = append(cells, line)
	}
	width := make([]int, ncol)
	for _, line := range cells {
		for c, s := range line {
			width[c] = max(width[c], utf8.RuneCountInString(s))
		}
	}
	for i, line := range cells {
		for c, s := range line {
			pad := strings.Repeat(" ", width[c]-utf8.RuneCountInString(s))
			if c > 0 {
				b.WriteString("  ")
			}
			if numeric[c] {
				b.WriteString(pad + s)
			} else if c < ncol-1 {
				b.WriteString(s + pad)
			} else {
				b.WriteString(s)
			}
		}
		b.WriteByte('\n')
		if i == 0 {
			for c := range line {
				if c > 0 {
					b.WriteString("  ")
				}
				b.WriteString(strings.Repeat("-", width[c]))
			}
			b.WriteByte('\n')
		}
	}
	for _, n := range t.Notes {
		b.WriteString("  ")
		b.WriteString(n)
		b.WriteByte('\n')
	}
}

// FormatCell is how a cell is printed in text tables: durations in the unit that
// suits them with three significant digits, floats with three or four significant
// digits, everything else with %v.
func FormatCell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case time.Duration:
		return FormatDuration(x)
	case float64:
		return FormatFloat(x)
	case float32:
		return FormatFloat(float64(x))
	default:
		return fmt.Sprint(v)
	}
}

// FormatFloat prints a float with about four significant digits, without an
// exponent for the magnitudes tables hold; "-" for what is no number (the bandwidth of
// a fit whose slope is not positive, say).
func FormatFloat(x float64) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return "-"
	case x == 0:
		return "0"
	}
	a := math.Abs(x)
	switch {
	case a >= 1000:
		return fmt.Sprintf("%.0f", x)
	case a >= 100:
		return fmt.Sprintf("%.1f", x)
	case a >= 10:
		return fmt.Sprintf("%.2f", x)
	case a >= 0.01:
		return fmt.Sprintf("%.3f", x)
	default:
		return fmt.Sprintf("%.3g", x)
	}
}

// FormatDuration prints a duration in ns, µs, ms or s with three or four significant
// digits: tables of latencies compare better that way than with time.Duration's own
// String.
func FormatDuration(d time.Duration) string {
	ns := float64(d)
	a := math.Abs(ns)
	switch {
	case a < 1e3:
		return fmt.Sprintf("%d ns", d.Nanoseconds())
	case a < 1e6:
		return FormatFloat(ns/1e3) + " µs"
	case a < 1e9:
		return FormatFloat(ns/1e6) + " ms"
	default:
		return FormatFloat(ns/1e9) + " s"
	}
}
