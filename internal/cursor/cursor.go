// Package cursor searches a sorted sequence from where the last search
// ended: the timeline and the replay look up times that mostly come in
// order (the next call of a thread, the next copy of a stream), where a
// binary search from scratch for each costs the log of the whole sequence.
package cursor

import "sort"

// Cursor finds where a sorted sequence's values above some value begin,
// starting from its last answer: forward by doubling steps and then by
// halves, so that values looked for in order cost the log of the distance
// between answers, and a value before the last one costs a binary search
// of the part before it. Its zero value starts at the sequence's start.
type Cursor struct {
	n int // the last answer
}

// Search returns, as sort.Search does, the smallest k in [0, n) for which
// above(k) is true, n for none; above must be false and then true along
// the sequence. n may differ from one call to the next.
func (c *Cursor) Search(n int, above func(k int) bool) int {
	lo, hi := 0, min(c.n, n) // the answer lies in [lo, hi]
	if hi == 0 || !above(hi-1) {
		lo, hi = hi, n
		for step := 1; lo+step <= n; step *= 2 {
			if above(lo + step - 1) {
				hi = lo + step - 1
				break
			}
			lo += step
		}
	}
	c.n = lo + sort.Search(hi-lo, func(k int) bool { return above(lo + k) })
	return c.n
}
