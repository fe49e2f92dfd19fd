package main

// mortonOrder returns the body indices sorted by key, ties by index, and the keys in that
// order. It is a least-significant-digit radix sort, eight bits a pass, skipping the passes
// whose digit is the same for every key (the high bits of a 63-bit key often are): every
// process sorts all bodies every step, so this sort is part of the time no process count
// divides. A radix sort is stable, so equal keys keep their index order.
func mortonOrder(keys []uint64) (order []int32, sorted []uint64) {
	n := len(keys)
	order, sorted = make([]int32, n), make([]uint64, n)
	for i := range order {
		order[i] = int32(i)
	}
	copy(sorted, keys)
	if n < 2 {
		return order, sorted
	}
	var counts [8][256]int
	for _, k := range keys {
		for d := range 8 {
			counts[d][byte(k>>(8*d))]++
		}
	}
	tmpOrder, tmpKeys := make([]int32, n), make([]uint64, n)
	for d := range 8 {
		c := &counts[d]
		if c[byte(sorted[0]>>(8*d))] == n {
			continue // every key has this digit: the pass would not move anything
		}
		sum := 0
		for b := range c {
			c[b], sum = sum, sum+c[b]
		}
		shift := uint(8 * d)
		for j, k := range sorted {
			b := byte(k >> shift)
			at := c[b]
			c[b]++
			tmpKeys[at], tmpOrder[at] = k, order[j]
		}
		sorted, tmpKeys = tmpKeys, sorted
		order, tmpOrder = tmpOrder, order
	}
	return order, sorted
}
