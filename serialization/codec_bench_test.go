package serialization

import (
	"bytes"
	"encoding/gob"
	"testing"
)

// The codec's benchmark: the 1023-node tree of Table 6.2 and 64 KiB of
// 16-byte structs, each through the object codec, through msgpack (today's
// object path before the codec, forced here by a msgpack tag), through
// encoding/gob, and for the tree through a hand-written serializer on the
// data calls (what Ibis generates). b.SetBytes counts user data: 16 bytes
// per node or struct. Run:
//
//	go test -run '^$' -bench 'ObjectCodec' -benchtime 2s ./serialization

// mpNode is cNode left to msgpack by its tag: the object path without the
// codec.
type mpNode struct {
	A           int32 `msgpack:"A"`
	B, C, D     int32
	Left, Right *mpNode
}

type (
	item   struct{ A, B, C, D int32 }
	mpItem struct {
		A       int32 `msgpack:"A"`
		B, C, D int32
	}
)

const benchTreeNodes = 1023

func benchTree() *cNode {
	nodes := make([]cNode, benchTreeNodes)
	for i := range nodes {
		nodes[i] = cNode{A: int32(i), B: int32(i + 1), C: int32(i + 2), D: int32(i + 3)}
		if l := 2*i + 1; l < len(nodes) {
			nodes[i].Left = &nodes[l]
		}
		if r := 2*i + 2; r < len(nodes) {
			nodes[i].Right = &nodes[r]
		}
	}
	return &nodes[0]
}

func mpTree(n *cNode) *mpNode {
	if n == nil {
		return nil
	}
	return &mpNode{A: n.A, B: n.B, C: n.C, D: n.D, Left: mpTree(n.Left), Right: mpTree(n.Right)}
}

// writeTreeData is the hand-written serializer: preorder, an int32 per
// reference, the four int32 of every node.
func writeTreeData(w *Writer, n *cNode) error {
	if n == nil {
		return w.WriteInt32(0)
	}
	for _, v := range [...]int32{1, n.A, n.B, n.C, n.D} {
		if err := w.WriteInt32(v); err != nil {
			return err
		}
	}
	if err := writeTreeData(w, n.Left); err != nil {
		return err
	}
	return writeTreeData(w, n.Right)
}

func readTreeData(r *Reader) (*cNode, error) {
	ref, err := r.ReadInt32()
	if err != nil || ref == 0 {
		return nil, err
	}
	n := new(cNode)
	for _, f := range [...]*int32{&n.A, &n.B, &n.C, &n.D} {
		if *f, err = r.ReadInt32(); err != nil {
			return nil, err
		}
	}
	if n.Left, err = readTreeData(r); err != nil {
		return nil, err
	}
	n.Right, err = readTreeData(r)
	return n, err
}

// objectBench is one way to move one payload.
type objectBench struct {
	name  string
	write func(w *Writer) error
	read  func(r *Reader) error
}

func objectBenches() map[string][]objectBench {
	tree := benchTree()
	mtree := mpTree(tree)
	items := make([]item, (64<<10)/16)
	mitems := make([]mpItem, len(items))
	for i := range items {
		items[i] = item{int32(i), 1, 2, 3}
		mitems[i] = mpItem{int32(i), 1, 2, 3}
	}
	var gbuf bytes.Buffer
	gobWrite := func(v any) func(w *Writer) error {
		return func(w *Writer) error {
			gbuf.Reset()
			if err := gob.NewEncoder(&gbuf).Encode(v); err != nil {
				return err
			}
			if err := w.WriteInt(gbuf.Len()); err != nil {
				return err
			}
			return w.WriteArray(gbuf.Bytes())
		}
	}
	var gin []byte
	gobRead := func(dst func() any) func(r *Reader) error {
		return func(r *Reader) error {
			n, err := r.ReadInt()
			if err != nil {
				return err
			}
			gin = append(gin[:0], make([]byte, n)...)
			if err := r.ReadArray(gin); err != nil {
				return err
			}
			return gob.NewDecoder(bytes.NewReader(gin)).Decode(dst())
		}
	}
	return map[string][]objectBench{
		"tree": {
			{"data", func(w *Writer) error { return writeTreeData(w, tree) },
				func(r *Reader) error { _, err := readTreeData(r); return err }},
			{"codec", func(w *Writer) error { return w.WriteObject(tree) },
				func(r *Reader) error { var n *cNode; return r.ReadObject(&n) }},
			{"msgpack", func(w *Writer) error { return w.WriteObject(mtree) },
				func(r *Reader) error { var n *mpNode; return r.ReadObject(&n) }},
			{"gob", gobWrite(tree), gobRead(func() any { return new(*cNode) })},
		},
		"structs-64K": {
			{"codec", func(w *Writer) error { return w.WriteObject(items) },
				func(r *Reader) error { var s []item; return r.ReadObject(&s) }},
			{"msgpack", func(w *Writer) error { return w.WriteObject(mitems) },
				func(r *Reader) error { var s []mpItem; return r.ReadObject(&s) }},
			{"gob", gobWrite(items), gobRead(func() any { return new([]item) })},
		},
	}
}

func BenchmarkObjectCodec(b *testing.B) {
	for _, payload := range []string{"tree", "structs-64K"} {
		user := int64(benchTreeNodes * 16)
		if payload != "tree" {
			user = 64 << 10
		}
		for _, ob := range objectBenches()[payload] {
			b.Run(payload+"/"+ob.name+"/write", func(b *testing.B) {
				w := NewWriter(KindObject, &discardSink{})
				b.SetBytes(user)
				b.ReportAllocs()
				for b.Loop() {
					if err := ob.write(w); err != nil {
						b.Fatal(err)
					}
					_, _ = w.Finish()
				}
			})
			b.Run(payload+"/"+ob.name+"/read", func(b *testing.B) {
				sink := &memSink{}
				w := NewWriter(KindObject, sink)
				if err := ob.write(w); err != nil {
					b.Fatal(err)
				}
				_, _ = w.Finish()
				msg := sink.bytes()
				src := bytes.NewReader(msg)
				r := NewReader(KindObject, src)
				b.SetBytes(user)
				b.ReportAllocs()
				for b.Loop() {
					src.Reset(msg)
					if err := firstErr(r.Next(), ob.read(r), r.Finish()); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
