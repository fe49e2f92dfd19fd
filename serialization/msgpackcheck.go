package serialization

import (
	"encoding/binary"
	"fmt"
)

// checkMsgpack verifies that b holds exactly one well-formed msgpack value
// whose arrays and maps nest at most maxDepth deep and never announce more
// elements than bytes remain. It runs before the msgpack decoder sees
// network bytes, because that decoder recurses without a depth limit (deep
// input would overflow the stack) and pre-allocates slices of the announced
// length (a short input could demand gigabytes). It never recurses itself.
func checkMsgpack(b []byte, maxDepth int) error {
	// stack[i] is the number of items still expected at nesting level i.
	var stackBuf [32]int64
	stack := append(stackBuf[:0], 1)
	pos := 0
	for len(stack) > 0 {
		top := len(stack) - 1
		if stack[top] == 0 {
			stack = stack[:top]
			continue
		}
		stack[top]--
		if pos >= len(b) {
			return corruptf("msgpack object truncated at byte %d", pos)
		}
		c := b[pos]
		pos++
		var skip, items int64 // payload bytes to skip, child items to expect
		switch {
		case c <= 0x7f || c >= 0xe0: // positive and negative fixint
		case c <= 0x8f: // fixmap
			items = 2 * int64(c&0x0f)
		case c <= 0x9f: // fixarray
			items = int64(c & 0x0f)
		case c <= 0xbf: // fixstr
			skip = int64(c & 0x1f)
		default:
			var err error
			skip, items, pos, err = msgpackItem(b, pos, c)
			if err != nil {
				return err
			}
		}
		rest := int64(len(b) - pos)
		if skip > rest {
			return corruptf("msgpack object truncated: a value at byte %d needs %d bytes, %d remain", pos, skip, rest)
		}
		pos += int(skip)
		if items > 0 {
			// Every item takes at least one byte.
			if items > int64(len(b)-pos) {
				return corruptf("msgpack container at byte %d announces %d items, but only %d bytes remain", pos, items, len(b)-pos)
			}
			if len(stack) >= maxDepth {
				return fmt.Errorf("%w: %w: msgpack object nests deeper than %d levels", ErrCorrupt, ErrTooLarge, maxDepth)
			}
			stack = append(stack, items)
		}
	}
	if pos != len(b) {
		return corruptf("msgpack object has %d trailing bytes", len(b)-pos)
	}
	return nil
}

// msgpackItem decodes the length information of the non-fix format code c
// whose first following byte is at pos. It returns the payload bytes to
// skip, the child items to expect, and the position after the length fields.
func msgpackItem(b []byte, pos int, c byte) (skip, items int64, next int, err error) {
	// uintN reads an n-byte big-endian length at pos.
	uintN := func(n int) (int64, bool) {
		if len(b)-pos < n {
			return 0, false
		}
		var v uint64
		switch n {
		case 1:
			v = uint64(b[pos])
		case 2:
			v = uint64(binary.BigEndian.Uint16(b[pos:]))
		case 4:
			v = uint64(binary.BigEndian.Uint32(b[pos:]))
		}
		pos += n
		return int64(v), true
	}
	var ok = true
	switch c {
	case 0xc0, 0xc2, 0xc3: // nil, false, true
	case 0xc4, 0xd9: // bin8, str8
		skip, ok = uintN(1)
	case 0xc5, 0xda: // bin16, str16
		skip, ok = uintN(2)
	case 0xc6, 0xdb: // bin32, str32
		skip, ok = uintN(4)
	case 0xc7: // ext8: length, type
		skip, ok = uintN(1)
		skip++
	case 0xc8: // ext16
		skip, ok = uintN(2)
		skip++
	case 0xc9: // ext32
		skip, ok = uintN(4)
		skip++
	case 0xca: // float32
		skip = 4
	case 0xcb: // float64
		skip = 8
	case 0xcc, 0xd0: // uint8, int8
		skip = 1
	case 0xcd, 0xd1: // uint16, int16
		skip = 2
	case 0xce, 0xd2: // uint32, int32
		skip = 4
	case 0xcf, 0xd3: // uint64, int64
		skip = 8
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1, 2, 4, 8, 16: type + data
		skip = 1 + int64(1)<<(c-0xd4)
	case 0xdc: // array16
		items, ok = uintN(2)
	case 0xdd: // array32
		items, ok = uintN(4)
	case 0xde: // map16
		items, ok = uintN(2)
		items *= 2
	case 0xdf: // map32
		items, ok = uintN(4)
		items *= 2
	default: // 0xc1 is never used
		return 0, 0, pos, corruptf("invalid msgpack format byte 0x%02x at byte %d", c, pos-1)
	}
	if !ok {
		return 0, 0, pos, corruptf("msgpack object truncated in the length of a value at byte %d", pos-1)
	}
	return skip, items, pos, nil
}
