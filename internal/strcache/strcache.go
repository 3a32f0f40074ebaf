// Package strcache holds what a function gave for the strings a record
// stream repeats: an API name or a thread's name on every call. The
// readers give each distinct name one string, so a Cache finds a name by
// where its bytes lie, without hashing them, and compares the bytes only
// where two strings of one length share a slot.
package strcache

import "unsafe"

// slots is how many strings a Cache holds: a capture's distinct API,
// thread and kernel names are mostly fewer. Two that share a slot take
// it in turn, each computed again when it comes back.
const slots = 256

// Cache maps strings to values of V, a bounded memo. The zero Cache is
// empty and ready to use; it is not safe for concurrent use.
type Cache[V any] struct {
	e [slots]entry[V]
}

type entry[V any] struct {
	s  string
	v  V
	ok bool
}

// Get returns the value put for s, ok false where the cache holds none.
func (c *Cache[V]) Get(s string) (v V, ok bool) {
	e := &c.e[slot(s)]
	if e.ok && len(e.s) == len(s) && (unsafe.StringData(e.s) == unsafe.StringData(s) || e.s == s) {
		return e.v, true
	}
	return v, false
}

// Put keeps v as the value of s, in place of what shared its slot.
func (c *Cache[V]) Put(s string, v V) {
	c.e[slot(s)] = entry[V]{s: s, v: v, ok: true}
}

// slot is where s is kept: a hash of its bytes' address and its length
// (Fibonacci hashing), so the one string a reader gives a name always
// lands in one slot.
func slot(s string) uintptr {
	p := uintptr(unsafe.Pointer(unsafe.StringData(s))) ^ uintptr(len(s))<<48
	return uintptr(uint64(p)*0x9E3779B97F4A7C15>>56) % slots
}
