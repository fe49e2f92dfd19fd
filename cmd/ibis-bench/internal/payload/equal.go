package payload

import "slices"

func equal(a, b *Data) bool {
	switch a.Spec.Kind {
	case Bytes:
		return slices.Equal(a.b, b.b)
	case Int32:
		return slices.Equal(a.i32, b.i32)
	case Int64:
		return slices.Equal(a.i64, b.i64)
	case Float32:
		return slices.Equal(a.f32, b.f32)
	case Float64:
		return slices.Equal(a.f64, b.f64)
	case Objects:
		return slices.Equal(a.obj, b.obj)
	case Tree:
		return equalTree(a.tree, b.tree)
	case ObjectsMsgpack:
		return slices.Equal(a.mobj, b.mobj)
	case TreeMsgpack:
		return equalMsgpackTree(a.mtre, b.mtre)
	case Bytes2D:
		return slices.EqualFunc(a.b2, b.b2, func(x, y []byte) bool { return slices.Equal(x, y) })
	case Float322D:
		return slices.EqualFunc(a.f2, b.f2, func(x, y []float32) bool { return slices.Equal(x, y) })
	}
	return false
}

func equalTree(a, b *Node) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.A == b.A && a.B == b.B && a.C == b.C && a.D == b.D &&
		equalTree(a.Left, b.Left) && equalTree(a.Right, b.Right)
}

func equalMsgpackTree(a, b *MsgpackNode) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.A == b.A && a.B == b.B && a.C == b.C && a.D == b.D &&
		equalMsgpackTree(a.Left, b.Left) && equalMsgpackTree(a.Right, b.Right)
}
