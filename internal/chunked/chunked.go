// Package chunked holds a list that grows by chunks: what it holds is
// never moved as more comes, so a list of hundreds of thousands of records
// costs what it holds, not the copies a slice grown by append makes.
package chunked

// Size is how many values a chunk holds (a power of 2).
const Size = 1 << 14

// List is a list of values kept in chunks of Size: past the first chunk,
// which grows as a slice does (a short list takes no more), it grows
// without moving what it holds, and leaves at most one chunk unused. The
// zero value is empty.
type List[T any] struct {
	chunks [][]T
	n      int
}

// Add appends v.
func (c *List[T]) Add(v T) {
	switch {
	case c.n == 0:
		c.chunks = [][]T{nil}
	case c.n%Size == 0:
		c.chunks = append(c.chunks, make([]T, 0, Size))
	}
	last := &c.chunks[len(c.chunks)-1]
	*last = append(*last, v)
	c.n++
}

// Len is the number of values added.
func (c *List[T]) Len() int { return c.n }

// At is value i.
func (c *List[T]) At(i int) T { return c.chunks[i/Size][i%Size] }

// Ptr is value i in place, to read or change without a copy; it holds
// until the list is moved (AppendTo, Slice).
func (c *List[T]) Ptr(i int) *T { return &c.chunks[i/Size][i%Size] }

// Chunks are the values in order, chunk by chunk.
func (c *List[T]) Chunks() [][]T { return c.chunks }

// Slice returns the values as one slice, nil for none, and empties the
// list, letting go of each chunk once it is copied.
func (c *List[T]) Slice() []T {
	return c.AppendTo(nil)
}

// AppendTo appends the values to out, growing it once, and empties the
// list, letting go of each chunk once it is copied. It returns out as is
// when the list is empty.
func (c *List[T]) AppendTo(out []T) []T {
	if c.n == 0 {
		return out
	}
	if cap(out)-len(out) < c.n {
		grown := make([]T, len(out), len(out)+c.n)
		copy(grown, out)
		out = grown
	}
	for i := range c.chunks {
		out = append(out, c.chunks[i]...)
		c.chunks[i] = nil
	}
	*c = List[T]{}
	return out
}
