package main

import (
	"fmt"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/report"
	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/stats"
)

// latencyReport tabulates the round trips: ms[0] is the raw socket, ms[1+i] variant
// i, each reps per-round-trip times measured in turn.
func latencyReport(about string, tm timer, size int, vs []variant, ms [][]float64) (*report.Report, error) {
	t := &report.Table{
		Title: fmt.Sprintf("latency: %d-byte round trip; %s", size, about),
		Columns: []string{"variant", "round trip", "median", "one way", "vs " + vs[0].Name,
			"vs " + vs[0].Name + " per round (median, min-max)", "vs raw"},
		Notes: []string{
			fmt.Sprintf("round trip = lower sextile of %d measurements, each a batch of round trips of at least %v; the variants and the raw socket take turns batch by batch", tm.reps, tm.minBatch),
			"vs " + vs[0].Name + ": ratio of the lower sextiles; per round: the ratio of the two batches of the same round, median and range over the rounds",
			"each variant: its own Ibis instance in each process (a sub-pool of two), a one-to-one data port each way, explicit receipt, no flavour capability (the variant's nio.send/nio.receive apply)",
			"raw: plain net.TCPConn echo (TCP_NODELAY, 8-byte frame header, one connection both ways) between the same two processes",
		},
	}
	lows := make([]float64, len(ms))
	for i, m := range ms {
		lo, err := stats.LowerSextile(m)
		if err != nil {
			return nil, err
		}
		lows[i] = lo
	}
	values := []map[string]any{}
	addRow := func(name string, i int) error {
		med, err := stats.Median(ms[i])
		if err != nil {
			return err
		}
		perRound := make([]float64, len(ms[i]))
		for r := range ms[i] {
			perRound[r] = ms[i][r] / ms[1][r]
		}
		prMed, err := stats.Median(perRound)
		if err != nil {
			return err
		}
		prLo, prHi := minMax(perRound)
		t.AddRow(name, seconds(lows[i]), seconds(med), seconds(lows[i]/2), lows[i]/lows[1],
			fmt.Sprintf("%s (%s-%s)", report.FormatFloat(prMed), report.FormatFloat(prLo), report.FormatFloat(prHi)), lows[i]/lows[0])
		values = append(values, map[string]any{"variant": name, "round_trip_seconds": lows[i], "median_seconds": med,
			"ratio": lows[i] / lows[1], "per_round_ratio_median": prMed, "ratio_to_raw": lows[i] / lows[0], "runs": ms[i]})
		return nil
	}
	for i, v := range vs {
		if err := addRow(v.Name, i+1); err != nil {
			return nil, err
		}
	}
	if err := addRow("raw socket", 0); err != nil {
		return nil, err
	}
	rep := report.New("latency")
	rep.Tables = append(rep.Tables, t)
	rep.Set("size", size)
	rep.Set("variants", values)
	return rep, nil
}

// minMax returns the smallest and largest of xs (not empty).
func minMax(xs []float64) (lo, hi float64) {
	lo, hi = xs[0], xs[0]
	for _, x := range xs[1:] {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}
