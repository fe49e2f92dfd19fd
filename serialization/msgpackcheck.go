package serialization

import (
	"encoding/binary"
	"fmt"
)

// Classes of msgpack values, as far as checking them is concerned.
const (
	mpNil    = iota // nil
	mpSmall         // bool, fixint, int8, uint8: boxed without allocating
	mpNumber        // a wider number
	mpStr           // a string: payload bytes
	mpBin           // binary: payload bytes
	mpExt           // an extension: type byte and payload bytes
	mpArray         // an array: items
	mpMap           // a map: entries, each a key and a value
	mpClasses
)

// genericBox is what msgpack allocates to put a value of each class into an
// interface (an any, or an element of []any or map[string]any), beyond its
// payload: a boxed number (8 bytes, 16 under the race detector), string or
// slice header; an extension decodes into a registered type such as
// time.Time. A map is pointer-shaped: its header is charged as
// objCost.mapBase.
var genericBox = [mpClasses]int64{mpNumber: 16, mpStr: 16, mpBin: 24, mpExt: 48, mpArray: 24}

// mpClassName names the containers in error messages.
var mpClassName = [mpClasses]string{mpArray: "an array", mpMap: "a map"}

// checkMsgpack verifies that b holds exactly one well-formed msgpack value
// whose arrays and maps nest at most maxDepth deep and never announce more
// elements than bytes remain. It runs before the msgpack decoder sees
// network bytes, because that decoder recurses without a depth limit (deep
// input would overflow the stack) and pre-allocates slices and maps of the
// announced length (a short input could demand gigabytes). It never
// recurses itself.
//
// With a non-nil cost it also estimates, from the costs of the destination
// type, an upper bound of what decoding b may allocate, and rejects the
// object with ErrTooLarge as soon as the estimate exceeds budget: every
// value, announced array item and announced map entry is charged. It
// returns the estimate.
func checkMsgpack(b []byte, maxDepth int, cost *objCost, budget int64) (int64, error) {
	// stack[i] is the number of items still expected at nesting level i.
	var stackBuf [32]int64
	stack := append(stackBuf[:0], 1)
	pos := 0
	var used, strBuf int64
	if cost != nil {
		used = min(cost.once, budget)
	}
	for len(stack) > 0 {
		top := len(stack) - 1
		if stack[top] == 0 {
			stack = stack[:top]
			continue
		}
		stack[top]--
		if pos >= len(b) {
			return used, corruptf("msgpack object truncated at byte %d", pos)
		}
		start := pos
		c0 := b[pos]
		pos++
		var cls int
		var skip, items int64
		switch {
		case c0 <= 0x7f || c0 >= 0xe0: // positive and negative fixint
			cls = mpSmall
		case c0 <= 0x8f: // fixmap
			cls, items = mpMap, 2*int64(c0&0x0f)
		case c0 <= 0x9f: // fixarray
			cls, items = mpArray, int64(c0&0x0f)
		case c0 <= 0xbf: // fixstr
			cls, skip = mpStr, int64(c0&0x1f)
		default:
			var err error
			if cls, skip, items, pos, err = msgpackItem(b, pos, c0); err != nil {
				return used, err
			}
		}
		rest := int64(len(b) - pos)
		if skip > rest {
			return used, corruptf("msgpack object truncated: a value at byte %d needs %d bytes, %d remain", pos, skip, rest)
		}
		pos += int(skip)
		if items > 0 {
			// Every item takes at least one byte.
			if items > int64(len(b)-pos) {
				return used, corruptf("msgpack container at byte %d announces %d items, but only %d bytes remain", pos, items, len(b)-pos)
			}
			if len(stack) >= maxDepth {
				return used, fmt.Errorf("%w: %w: msgpack object nests deeper than %d levels", ErrCorrupt, ErrTooLarge, maxDepth)
			}
			stack = append(stack, items)
		}
		if cost == nil {
			continue
		}
		// What this value costs by itself, and what each of its announced
		// items or entries costs.
		c := cost.head[cls]
		var count, each int64
		switch cls {
		case mpStr, mpBin, mpExt:
			if skip > 0 && (cost.strings || cls == mpExt) {
				c = satAdd(c, roundAlloc(skip)) // the copy
			}
			if skip > strBuf {
				// The decoder reads strings (even struct field names)
				// through a buffer it keeps, which grows to the longest;
				// beyond 1 MiB, by appending 1 MiB at a time.
				c = satAdd(c, bufferGrowth(skip))
				strBuf = skip
			}
		case mpArray:
			if items == 0 {
				c = satAdd(c, cost.zero) // reflect.Zero of a struct
			}
			count, each = items, cost.item
		case mpMap:
			if items > 0 {
				c = satAdd(c, cost.mapGroup)
			}
			count, each = items/2, cost.entry
		}
		total := c
		if count > 0 {
			total = satAdd(c, satMul(count, each))
		}
		if total > budget-used {
			what := fmt.Sprintf("by byte %d it needs about %d bytes", pos, satAdd(used, total))
			if count > 0 && satMul(count, each) > c {
				unit := "items"
				if cls == mpMap {
					unit = "entries"
				}
				what += fmt.Sprintf(" (%s at byte %d announces %d %s of up to %d bytes each)", mpClassName[cls], start, count, unit, each)
			}
			return used, fmt.Errorf("%w: decoding a %d-byte msgpack object into %s could allocate more than the limit of %d bytes (WithReaderMaxObjectMemory): %s",
				ErrTooLarge, len(b), cost.name, budget, what)
		}
		used += total
	}
	if pos != len(b) {
		return used, corruptf("msgpack object has %d trailing bytes", len(b)-pos)
	}
	return used, nil
}

// bufferGrowth bounds what msgpack/v5 allocates to grow its read buffer to n
// bytes: one allocation up to 1 MiB, above that 8 n (it appends 1 MiB chunks,
// each of which may copy the buffer).
func bufferGrowth(n int64) int64 {
	if n <= 1<<20 {
		return satMul(2, roundAlloc(max(n, 64)))
	}
	return satMul(8, n)
}

// msgpackItem decodes the length information of the non-fix format code c
// whose first following byte is at pos. It returns the value's class, the
// payload bytes to skip, the child items to expect (two per map entry), and
// the position after the length fields.
func msgpackItem(b []byte, pos int, c byte) (cls int, skip, items int64, next int, err error) {
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
	case 0xc0: // nil
		cls = mpNil
	case 0xc2, 0xc3: // false, true
		cls = mpSmall
	case 0xc4: // bin8
		cls = mpBin
		skip, ok = uintN(1)
	case 0xc5: // bin16
		cls = mpBin
		skip, ok = uintN(2)
	case 0xc6: // bin32
		cls = mpBin
		skip, ok = uintN(4)
	case 0xd9: // str8
		cls = mpStr
		skip, ok = uintN(1)
	case 0xda: // str16
		cls = mpStr
		skip, ok = uintN(2)
	case 0xdb: // str32
		cls = mpStr
		skip, ok = uintN(4)
	case 0xc7: // ext8: length, type
		cls = mpExt
		skip, ok = uintN(1)
		skip++
	case 0xc8: // ext16
		cls = mpExt
		skip, ok = uintN(2)
		skip++
	case 0xc9: // ext32
		cls = mpExt
		skip, ok = uintN(4)
		skip++
	case 0xca: // float32
		cls, skip = mpNumber, 4
	case 0xcb: // float64
		cls, skip = mpNumber, 8
	case 0xcc, 0xd0: // uint8, int8
		cls, skip = mpSmall, 1
	case 0xcd, 0xd1: // uint16, int16
		cls, skip = mpNumber, 2
	case 0xce, 0xd2: // uint32, int32
		cls, skip = mpNumber, 4
	case 0xcf, 0xd3: // uint64, int64
		cls, skip = mpNumber, 8
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1, 2, 4, 8, 16: type + data
		cls, skip = mpExt, 1+int64(1)<<(c-0xd4)
	case 0xdc: // array16
		cls = mpArray
		items, ok = uintN(2)
	case 0xdd: // array32
		cls = mpArray
		items, ok = uintN(4)
	case 0xde: // map16
		cls = mpMap
		items, ok = uintN(2)
		items *= 2
	case 0xdf: // map32
		cls = mpMap
		items, ok = uintN(4)
		items *= 2
	default: // 0xc1 is never used
		return 0, 0, 0, pos, corruptf("invalid msgpack format byte 0x%02x at byte %d", c, pos-1)
	}
	if !ok {
		return 0, 0, 0, pos, corruptf("msgpack object truncated in the length of a value at byte %d", pos-1)
	}
	return cls, skip, items, pos, nil
}
