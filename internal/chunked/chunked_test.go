package chunked

import "testing"

// TestList: a list past its first chunks gives back every value at its
// index, chunk by chunk, and as one slice of its length.
func TestList(t *testing.T) {
	var c List[int64]
	n := 3*Size + 5
	for i := range n {
		c.Add(int64(i) * 3)
	}
	if c.Len() != n || len(c.Chunks()) != 4 {
		t.Fatalf("%d values in %d chunks", c.Len(), len(c.Chunks()))
	}
	for _, i := range []int{0, 1, Size - 1, Size, 2*Size + 7, n - 1} {
		if c.At(i) != int64(i)*3 {
			t.Errorf("At(%d) = %d", i, c.At(i))
		}
	}
	k := 0
	for _, chunk := range c.Chunks() {
		for _, v := range chunk {
			if v != int64(k)*3 {
				t.Fatalf("chunks: value %d is %d", k, v)
			}
			k++
		}
	}
	if k != n {
		t.Fatalf("chunks: %d values, want %d", k, n)
	}
	s := c.Slice()
	if len(s) != n || cap(s) != n || c.Len() != 0 || c.Chunks() != nil {
		t.Fatalf("slice: %d values (cap %d), %d left in the list", len(s), cap(s), c.Len())
	}
	for i, v := range s {
		if v != int64(i)*3 {
			t.Fatalf("slice[%d] = %d", i, v)
		}
	}
	var empty List[int64]
	if empty.Slice() != nil {
		t.Error("an empty list's slice is not nil")
	}
}

// TestAppendTo: the values follow what the slice held, in one growth.
func TestAppendTo(t *testing.T) {
	var c List[int]
	for i := range Size + 3 {
		c.Add(i + 2)
	}
	out := c.AppendTo([]int{0, 1})
	if len(out) != Size+5 || cap(out) != Size+5 || c.Len() != 0 {
		t.Fatalf("%d values (cap %d), %d left", len(out), cap(out), c.Len())
	}
	for i, v := range out {
		if v != i {
			t.Fatalf("out[%d] = %d", i, v)
		}
	}
	var empty List[int]
	if got := empty.AppendTo(out[:3]); len(got) != 3 || &got[0] != &out[0] {
		t.Errorf("an empty list changed the slice: %v", got)
	}
}

// TestPtr changes values in place through Ptr, across chunks.
func TestPtr(t *testing.T) {
	var c List[int]
	for i := range Size + 3 {
		c.Add(i)
	}
	for _, i := range []int{0, Size - 1, Size, Size + 2} {
		*c.Ptr(i) += 1000
		if c.At(i) != i+1000 {
			t.Errorf("At(%d) = %d after Ptr's change, want %d", i, c.At(i), i+1000)
		}
	}
}
