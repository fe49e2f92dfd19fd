package memexp

import (
	"bytes"
	"errors"
	"testing"

	"github.com/ibisgo/ibis/serialization"
)

func countNodes(n *node) int {
	if n == nil {
		return 0
	}
	return 1 + countNodes(n.Left) + countNodes(n.Right)
}

func TestBuildTree(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 10, 1023} {
		root := buildTree(n, 1)
		if got := countNodes(root); got != n {
			t.Fatalf("buildTree(%d) has %d nodes", n, got)
		}
		if err := compareTrees(root, buildTree(n, 1)); err != nil {
			t.Fatalf("the same seed gave different trees: %v", err)
		}
	}
	a, b := buildTree(7, 1), buildTree(7, 1)
	b.Right.Left.C++
	if err := compareTrees(a, b); !errors.Is(err, ErrMismatch) {
		t.Fatalf("a changed value: %v", err)
	}
	b = buildTree(7, 1)
	b.Left.Left = nil
	if err := compareTrees(a, b); !errors.Is(err, ErrMismatch) {
		t.Fatalf("a missing node: %v", err)
	}
}

// roundTripTree sends root through a Writer in the given order and back.
func roundTripTree(t *testing.T, root *node, object bool, order Order) *node {
	t.Helper()
	kind := serialization.KindData
	if object {
		kind = serialization.KindObject
	}
	p := &treePayload{object: object, nodes: countNodes(root), root: root}
	msg, err := encodeMessage(p, kind, order)
	if err != nil {
		t.Fatal(err)
	}
	if err := decodeMessage(p, kind, msg, order); err != nil {
		t.Fatal(err)
	}
	return p.out
}

func TestTreeRoundTrip(t *testing.T) {
	chain := &node{A: 1}
	for i := range 5000 { // deeper than any recursion should go
		chain = &node{A: int32(i), Left: chain}
	}
	for name, root := range map[string]*node{"empty": nil, "one": {A: -1, D: 7}, "complete": buildTree(1023, 3), "chain": chain} {
		for _, o := range []Order{OrderNative, OrderSwapped} {
			out := roundTripTree(t, root, false, o)
			if countNodes(out) != countNodes(root) {
				t.Fatalf("%s data %v: %d nodes back", name, o, countNodes(out))
			}
			if name != "chain" { // msgpack limits nesting; the chain is only for the data codec
				out = roundTripTree(t, root, true, o)
				if countNodes(out) != countNodes(root) {
					t.Fatalf("%s object %v: %d nodes back", name, o, countNodes(out))
				}
			}
		}
	}
}

// treeMessage builds a data message from int32 values.
func treeMessage(t *testing.T, vals ...int32) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := serialization.NewWriter(serialization.KindData, serialization.NewStreamSink(&buf))
	for _, v := range vals {
		if err := w.WriteInt32(v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readTreeMessage(msg []byte, maxNodes int) (*node, error) {
	r := serialization.NewReader(serialization.KindData, bytes.NewReader(msg))
	if err := r.Next(); err != nil {
		return nil, err
	}
	var c treeCodec
	return c.read(r, maxNodes)
}

func TestTreeReadRejects(t *testing.T) {
	// One node with two nil children is fine.
	if n, err := readTreeMessage(treeMessage(t, 1, 1, 2, 3, 4, 0, 0), 1); err != nil || n == nil || n.D != 4 {
		t.Fatalf("one node: %+v, %v", n, err)
	}
	for name, c := range map[string]struct {
		vals []int32
		max  int
		want error
	}{
		"bad reference":  {[]int32{2}, 10, ErrMismatch},
		"too many nodes": {[]int32{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}, 1, ErrMismatch},
		"truncated":      {[]int32{1, 0, 0}, 10, serialization.ErrShortMessage},
	} {
		if _, err := readTreeMessage(treeMessage(t, c.vals...), c.max); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
}

// FuzzTreeRead feeds arbitrary bytes to the data-tree decoder: it must
// return a tree of at most maxNodes nodes or an error, never panic, and
// never allocate beyond its bound.
func FuzzTreeRead(f *testing.F) {
	f.Add([]byte{})
	var buf bytes.Buffer
	w := serialization.NewWriter(serialization.KindData, serialization.NewStreamSink(&buf))
	var c treeCodec
	if err := c.write(w, buildTree(7, 1)); err != nil {
		f.Fatal(err)
	}
	if _, err := w.Finish(); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	const maxNodes = 64
	f.Fuzz(func(t *testing.T, data []byte) {
		r := serialization.NewReader(serialization.KindData, bytes.NewReader(data),
			serialization.WithReaderMaxMessageSize(1<<16), serialization.WithReaderMaxPacketSize(1<<16))
		if err := r.Next(); err != nil {
			return
		}
		var c treeCodec
		root, err := c.read(r, maxNodes)
		if err == nil && countNodes(root) > maxNodes {
			t.Fatalf("%d nodes, the bound is %d", countNodes(root), maxNodes)
		}
	})
}
