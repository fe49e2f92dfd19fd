package report

import (
	"errors"
	"time"
)

// ErrNoPlot is returned by SavePlot when the report has no curve to draw, so that a
// -plot flag given to a subcommand without curves fails clearly instead of writing
// an empty picture.
var ErrNoPlot = errors.New("report: nothing to plot")

// ErrFormat is returned by SavePlot for a file name whose extension is neither .png
// nor .svg.
var ErrFormat = errors.New("report: unsupported plot format")

// Table is one result table: a title, column headings, rows of cells and free-text
// notes printed under it (how the figures were measured, fitted parameters, caveats).
// Cells may be string, int, int64, float64 or time.Duration (and anything else, which
// is printed with %v).
type Table struct {
	Title   string
	Columns []string
	Rows    [][]any
	Notes   []string
}

// AddRow appends one row; a convenience so experiments read like the tables they fill.
func (t *Table) AddRow(cells ...any) { t.Rows = append(t.Rows, cells) }

// Series is one named curve of a plot: points (X[i], Y[i]).
type Series struct {
	Name string
	X, Y []float64
}

// Plot is one figure: axis labels, optional log scales and its curves.
type Plot struct {
	Title, XLabel, YLabel string
	LogX, LogY            bool
	Series                []Series
}

// Report is everything one subcommand run produced.
type Report struct {
	// Command is the subcommand's name (and, by convention, nothing else).
	Command string
	Tables  []*Table
	Plots   []*Plot
	// Values holds fitted parameters and other single figures under stable keys, so
	// that scripts reading the JSON need not parse tables.
	Values map[string]any
}

// New returns an empty report for the named command.
func New(command string) *Report {
	return &Report{Command: command, Values: map[string]any{}}
}

// Set records a named value for the JSON output.
func (r *Report) Set(key string, v any) {
	if r.Values == nil {
		r.Values = map[string]any{}
	}
	r.Values[key] = v
}

// durationCell is how a time.Duration cell appears in JSON: nanoseconds as a number,
// which is what scripts want to compute with.
func durationCell(d time.Duration) float64 { return float64(d.Nanoseconds()) }
