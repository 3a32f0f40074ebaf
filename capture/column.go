package capture

// columnChunk is how many values a chunk of a column holds (a power of 2).
const columnChunk = 1 << 14

// column is a list of values kept in chunks of columnChunk: past the
// first chunk, which grows as a slice does (a small capture's copies take
// no more), it grows without moving what it holds, and leaves at most one
// chunk unused.
type column[T any] struct {
	chunks [][]T
	n      int
}

func (c *column[T]) add(v T) {
	switch {
	case c.n == 0:
		c.chunks = [][]T{nil}
	case c.n%columnChunk == 0:
		c.chunks = append(c.chunks, make([]T, 0, columnChunk))
	}
	last := &c.chunks[len(c.chunks)-1]
	*last = append(*last, v)
	c.n++
}

func (c *column[T]) at(i int) T { return c.chunks[i/columnChunk][i%columnChunk] }

// slice returns the values as one slice, nil for none, and empties the
// column, letting go of each chunk once it is copied.
func (c *column[T]) slice() []T {
	if c.n == 0 {
		return nil
	}
	out := make([]T, 0, c.n)
	for i := range c.chunks {
		out = append(out, c.chunks[i]...)
		c.chunks[i] = nil
	}
	*c = column[T]{}
	return out
}
