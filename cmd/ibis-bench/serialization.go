package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/memexp"
	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/report"
)

func init() {
	register(&command{
		name:    "serialization",
		summary: "Table 6.2: MB/s of serializing 100 KB arrays and a 1023-object tree with the data and object serializations (in memory)",
		setup:   setupSerialization,
	})
}

type serializationFlags struct {
	mem          memFlags
	size         string
	types, kinds string
	nodes        int
}

func setupSerialization(fs *flag.FlagSet) func(ctx context.Context, e *env) (*report.Report, error) {
	var f serializationFlags
	fs.StringVar(&f.size, "size", "100K", "bytes per array (K = 1024, M = 1024*1024)")
	fs.StringVar(&f.types, "types", "byte,int32,int64,float64", "array element types: byte, int16, int32, int64, float32, float64")
	fs.IntVar(&f.nodes, "nodes", memexp.DefaultTreeNodes, "objects in the tree (four int32 each); 0 leaves the tree out")
	fs.StringVar(&f.kinds, "kinds", "data,object", "serializations: data (WriteArray; the tree by a hand-written serializer) and object (WriteObject; the tree through the object codec)")
	f.mem.register(fs)
	return func(ctx context.Context, e *env) (*report.Report, error) {
		var p memexp.SerializationParams
		var err error
		if p.ArrayBytes, err = memexp.ParseSize(f.size); err != nil {
			return nil, fmt.Errorf("%w: -size: %w", errUsage, err)
		}
		if p.ArrayBytes == 0 {
			return nil, fmt.Errorf("%w: -size must be at least one element", errUsage)
		}
		if p.Arrays, err = memexp.ParseElems(f.types); err != nil {
			return nil, fmt.Errorf("%w: -types: %w", errUsage, err)
		}
		if p.Kinds, err = memexp.ParseKinds(f.kinds); err != nil {
			return nil, fmt.Errorf("%w: -kinds: %w", errUsage, err)
		}
		switch {
		case f.nodes < 0:
			return nil, fmt.Errorf("%w: -nodes %d is negative", errUsage, f.nodes)
		case f.nodes == 0:
			p.NoTree = true
		default:
			p.TreeNodes = f.nodes
		}
		opts, orders, err := f.mem.options(e)
		if err != nil {
			return nil, err
		}
		p.Orders, p.CopySink = orders, f.mem.copySink
		res, err := memexp.Serialization(ctx, p, opts...)
		if err != nil {
			return nil, memUsage(err)
		}
		return serializationReport(e, res), nil
	}
}

// serRow is one row of Table 6.2: a payload, and for the tree whether the
// figures count the user data or every byte of the message.
type serRow struct {
	label   string
	payload string
	total   bool
}

// serializationReport lays the result out as Table 6.2: a row per payload
// (two for the tree: user data and total bytes), a write and a read column
// per serialization, one table per byte order, and the cost of the swapped
// order when both were measured.
func serializationReport(e *env, res *memexp.SerializationResult) *report.Report {
	rep := report.New("serialization")
	p := res.Params
	var rows []serRow
	for _, el := range p.Arrays {
		n := p.ArrayBytes / el.Size() * el.Size()
		rows = append(rows, serRow{label: fmt.Sprintf("%s %s[]", memexp.FormatSize(n), el), payload: memexp.ArrayPayload(el)})
	}
	if !p.NoTree {
		rows = append(rows,
			serRow{label: fmt.Sprintf("%d-node tree user", p.TreeNodes), payload: memexp.TreePayload},
			serRow{label: fmt.Sprintf("%d-node tree total", p.TreeNodes), payload: memexp.TreePayload, total: true})
	}
	cols := []string{"data"}
	for _, k := range p.Kinds {
		cols = append(cols, k.String()+" write", k.String()+" read")
	}
	cols = append(cols, "bytes/message")
	notes := memNotes(e, res.Statistic, res.Repetitions, res.MinBatchNs, res.NativeOrder)
	notes = append(notes,
		"data: WriteArray/ReadArray into the caller's slice; the tree by a hand-written serializer (an int32 per reference, four int32 per node), as Ibis generates",
		"object: WriteObject/ReadObject; arrays take the tagged fast path and are read into a new slice each time; the tree is one object through the object codec (go test -bench ObjectCodec ./serialization compares it with msgpack and gob), rebuilt on every read",
		"tree user: 16 bytes of int32 per node; tree total: every byte of the message (references, object codec header, Ibis headers); bytes/message per serialization in column order")
	if p.CopySink {
		notes = append(notes, "-copy-sink: the writes copy every message into memory")
	} else {
		notes = append(notes, "writes go to a sink that only counts bytes: an array sent as a bulk packet in native order is not copied at all (the thesis' ∞), so its write figure is the per-message cost")
	}
	cell := func(payload string, total bool, k string, o memexp.Order, d memexp.Direction) float64 {
		c, _ := res.Find(payload, k, o, d)
		if total {
			return c.TotalMBps
		}
		return c.UserMBps
	}
	for _, o := range p.Orders {
		t := &report.Table{Title: fmt.Sprintf("serialization, %s byte order (MB/s)", o), Columns: cols, Notes: notes}
		for _, r := range rows {
			row := []any{r.label}
			sizes := ""
			for i, k := range p.Kinds {
				for _, d := range []memexp.Direction{memexp.Write, memexp.Read} {
					row = append(row, cell(r.payload, r.total, k.String(), o, d))
				}
				c, _ := res.Find(r.payload, k.String(), o, memexp.Write)
				if i > 0 {
					sizes += " / "
				}
				if r.total || r.payload != memexp.TreePayload {
					sizes += fmt.Sprint(c.WireBytes)
				} else {
					sizes += fmt.Sprint(c.UserBytes)
				}
			}
			t.Rows = append(t.Rows, append(row, sizes))
		}
		rep.Tables = append(rep.Tables, t)
		notes = nil
	}
	if len(p.Orders) == 2 {
		t := &report.Table{
			Title:   "serialization, cost of the swapped byte order (native MB/s / swapped MB/s)",
			Columns: cols[:len(cols)-1],
			Notes:   []string{"1.0: swapping is free. Object codec bytes do not depend on the byte order; only the tags and lengths around them do"},
		}
		for _, r := range rows {
			if r.total {
				continue // the same ratio as the user row
			}
			row := []any{r.label}
			for _, k := range p.Kinds {
				for _, d := range []memexp.Direction{memexp.Write, memexp.Read} {
					row = append(row, ratio(cell(r.payload, false, k.String(), memexp.OrderNative, d),
						cell(r.payload, false, k.String(), memexp.OrderSwapped, d)))
				}
			}
			t.Rows = append(t.Rows, row)
		}
		rep.Tables = append(rep.Tables, t)
	}
	rep.Set("native_order", res.NativeOrder)
	rep.Set("statistic", res.Statistic)
	rep.Set("repetitions", res.Repetitions)
	rep.Set("min_batch_ns", res.MinBatchNs)
	rep.Set("copy_sink", p.CopySink)
	rep.Set("cases", res.Cases)
	return rep
}
