package strcache

import (
	"strconv"
	"strings"
	"testing"
)

func TestCache(t *testing.T) {
	var c Cache[int]
	if _, ok := c.Get("cudaMemcpyAsync"); ok {
		t.Fatal("an empty cache gave a value")
	}
	c.Put("cudaMemcpyAsync", 1)
	if v, ok := c.Get("cudaMemcpyAsync"); !ok || v != 1 {
		t.Fatalf("Get = %d, %v; want 1, true", v, ok)
	}
	// The same bytes at another address: found by comparing them, where
	// both land in one slot, else not found (and computed again).
	other := strings.Clone("cudaMemcpyAsync")
	if v, ok := c.Get(other); ok && v != 1 {
		t.Fatalf("another copy of the name gave %d", v)
	}
	if _, ok := c.Get(""); ok {
		t.Fatal("the empty string was found, never put")
	}
	// Many strings: each found gives its own value, never another's.
	names := make([]string, 4*slots)
	for i := range names {
		names[i] = "name" + strconv.Itoa(i)
		c.Put(names[i], i)
	}
	found := 0
	for i, n := range names {
		if v, ok := c.Get(n); ok {
			found++
			if v != i {
				t.Fatalf("Get(%q) = %d, want %d", n, v, i)
			}
		}
	}
	if found == 0 || found > slots {
		t.Fatalf("%d of %d strings found in %d slots", found, len(names), slots)
	}
}

func BenchmarkGet(b *testing.B) {
	var c Cache[int]
	names := []string{"cudaMemcpyAsync", "cudaLaunchKernel", "cudaStreamSynchronize", "cuCtxGetCurrent", "cudaEventRecord"}
	for i, n := range names {
		c.Put(n, i)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok := c.Get(names[i%len(names)]); !ok {
			c.Put(names[i%len(names)], i)
		}
	}
}

func BenchmarkMap(b *testing.B) {
	m := map[string]int{}
	names := []string{"cudaMemcpyAsync", "cudaLaunchKernel", "cudaStreamSynchronize", "cuCtxGetCurrent", "cudaEventRecord"}
	for i, n := range names {
		m[n] = i
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok := m[names[i%len(names)]]; !ok {
			m[names[i%len(names)]] = i
		}
	}
}
