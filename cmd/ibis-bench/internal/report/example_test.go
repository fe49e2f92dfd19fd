package report_test

import (
	"os"
	"time"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/report"
)

// An experiment fills a report; the framework prints it, and writes JSON and plots
// when asked.
func Example() {
	r := report.New("pingpong")
	t := &report.Table{Title: "one-way latency", Columns: []string{"size (B)", "T(n)", "T/raw"}}
	t.AddRow(0, 9500*time.Nanosecond, 1.31)
	t.AddRow(1024, 10200*time.Nanosecond, 1.28)
	t.Notes = append(t.Notes, "lower sextile of 150 measurements")
	r.Tables = append(r.Tables, t)
	r.Set("ts_seconds", 9.4e-6)
	_ = r.WriteText(os.Stdout)
	// Output:
	// one-way latency
	// size (B)      T(n)  T/raw
	// --------  --------  -----
	//        0  9.500 µs  1.310
	//     1024  10.20 µs  1.280
	//   lower sextile of 150 measurements
}
