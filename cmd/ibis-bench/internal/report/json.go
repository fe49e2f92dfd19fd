package report

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"time"
)

// jsonReport is the JSON shape of a Report; durations become nanoseconds and
// non-finite floats become null, which JSON cannot otherwise carry.
type jsonReport struct {
	Command string         `json:"command"`
	Tables  []jsonTable    `json:"tables"`
	Plots   []*Plot        `json:"plots,omitempty"`
	Values  map[string]any `json:"values,omitempty"`
}

type jsonTable struct {
	Title   string   `json:"title"`
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
	Notes   []string `json:"notes,omitempty"`
}

// MarshalJSON gives Series lower-case keys like the rest of the JSON output.
func (s Series) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Name string `json:"name"`
		X    []any  `json:"x"`
		Y    []any  `json:"y"`
	}{s.Name, floats(s.X), floats(s.Y)})
}

// MarshalJSON gives Plot lower-case keys like the rest of the JSON output.
func (p *Plot) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Title  string   `json:"title"`
		XLabel string   `json:"xlabel"`
		YLabel string   `json:"ylabel"`
		LogX   bool     `json:"logx"`
		LogY   bool     `json:"logy"`
		Series []Series `json:"series"`
	}{p.Title, p.XLabel, p.YLabel, p.LogX, p.LogY, p.Series})
}

func floats(xs []float64) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = jsonValue(x)
	}
	return out
}

// jsonValue turns one cell or value into something encoding/json accepts.
func jsonValue(v any) any {
	switch x := v.(type) {
	case time.Duration:
		return durationCell(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return x
	case float32:
		return jsonValue(float64(x))
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = jsonValue(e)
		}
		return m
	case []float64:
		return floats(x)
	default:
		return v
	}
}

// JSON returns the report as indented JSON.
func (r *Report) JSON() ([]byte, error) {
	jr := jsonReport{Command: r.Command, Plots: r.Plots, Tables: []jsonTable{}}
	for _, t := range r.Tables {
		jt := jsonTable{Title: t.Title, Columns: t.Columns, Notes: t.Notes, Rows: make([][]any, len(t.Rows))}
		for i, row := range t.Rows {
			jt.Rows[i] = make([]any, len(row))
			for c, cell := range row {
				jt.Rows[i][c] = jsonValue(cell)
			}
		}
		jr.Tables = append(jr.Tables, jt)
	}
	if len(r.Values) > 0 {
		jr.Values = jsonValue(r.Values).(map[string]any)
	}
	b, err := json.MarshalIndent(jr, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("report: encoding JSON: %w", err)
	}
	return append(b, '\n'), nil
}

// WriteJSON writes the report as indented JSON to the file at path.
func (r *Report) WriteJSON(path string) error {
	b, err := r.JSON()
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("report: writing JSON: %w", err)
	}
	return nil
}
