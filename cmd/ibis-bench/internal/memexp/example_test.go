package memexp_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/memexp"
)

// ExampleConversion measures one row of Table 6.1 briefly and prints its
// shape (the figures themselves depend on the machine).
func ExampleConversion() {
	res, err := memexp.Conversion(context.Background(), memexp.ConversionParams{
		Elems: []memexp.Elem{memexp.ElemFloat64},
		Sizes: []int{8 << 10},
	}, memexp.WithRepetitions(6), memexp.WithMinBatch(100*time.Microsecond))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range res.Cases[:4] {
		fmt.Println(memexp.FormatSize(c.Bytes), c.Elem, c.Method, c.Order, c.Dir, c.MBps > 0)
	}
	fmt.Println(len(res.Cases), "cases,", res.Statistic, "of", res.Repetitions, "batches each")
	// Output:
	// 8 KiB float64 loop native write true
	// 8 KiB float64 loop native read true
	// 8 KiB float64 loop swapped write true
	// 8 KiB float64 loop swapped read true
	// 12 cases, sextile of 6 batches each
}

// ExampleSerialization measures the tree row of Table 6.2 briefly.
func ExampleSerialization() {
	res, err := memexp.Serialization(context.Background(), memexp.SerializationParams{
		Arrays: []memexp.Elem{memexp.ElemInt32}, ArrayBytes: 1 << 10, TreeNodes: 1023,
		Orders: []memexp.Order{memexp.OrderNative},
	}, memexp.WithRepetitions(6))
	if err != nil {
		fmt.Println(err)
		return
	}
	c, _ := res.Find(memexp.TreePayload, "data", memexp.OrderNative, memexp.Read)
	fmt.Println(c.Nodes, "nodes:", c.UserBytes, "bytes of user data in", c.WireBytes, "bytes of message")
	// Output:
	// 1023 nodes: 16368 bytes of user data in 24592 bytes of message
}
