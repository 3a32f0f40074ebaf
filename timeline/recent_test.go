package timeline

import "testing"

// recentKeys finds the last keys added, each with its index, and forgets
// the oldest once more than it holds were added.
func TestRecentKeys(t *testing.T) {
	var r recentKeys[[2]int64]
	if _, ok := r.find([2]int64{0, 0}); ok {
		t.Fatal("an empty recentKeys found the zero key")
	}
	n := len(r.keys) + 3
	for i := range n {
		r.add([2]int64{int64(i), -int64(i)}, 10*i)
	}
	for i := range n {
		at, ok := r.find([2]int64{int64(i), -int64(i)})
		if kept := i >= n-len(r.keys); ok != kept || ok && at != 10*i {
			t.Errorf("key %d: found %v at %d, want found %v at %d", i, ok, at, kept, 10*i)
		}
	}
}
