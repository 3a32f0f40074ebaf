package timeline

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/chunked"
)

// TestGather checks gather and gatherList, whose identity is l's own
// values, against a value-by-value reordering.
func TestGather(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	n := 3*chunked.Size + 77
	rotated := func(k int) []int32 {
		p := make([]int32, n)
		for i := range p {
			p[i] = int32((i + k) % n)
		}
		return p
	}
	runs := identity(n)
	for i := 0; i < n; {
		j := min(i+rng.Intn(40)+1, n)
		rng.Shuffle(j-i, func(a, b int) { runs[i+a], runs[i+b] = runs[i+b], runs[i+a] })
		i = j
	}
	reversed := identity(n)
	slices.Reverse(reversed)
	shuffled := identity(n)
	rng.Shuffle(n, func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
	perms := map[string][]int32{
		"identity": identity(n), "empty": {}, "one first": rotated(n - 1), "rotated": rotated(chunked.Size + 5),
		"short runs": runs, "shuffled": shuffled, "reversed": reversed,
	}
	values := make([]int64, n)
	for i := range values {
		values[i] = rng.Int63()
	}
	for name, perm := range perms {
		want := make([]int64, len(perm))
		for i, p := range perm {
			want[i] = values[p]
		}
		if got := gather(values[:len(perm)], perm); !slices.Equal(got, want) {
			t.Errorf("%s: gather differs", name)
		}
		var l chunked.List[int64]
		for _, v := range values[:len(perm)] {
			l.Add(v)
		}
		if got := gatherList(&l, perm); !slices.Equal(got, want) || got == nil || l.Len() != 0 {
			t.Errorf("%s: gatherList differs (nil %v, %d left)", name, got == nil, l.Len())
		}
	}
}
