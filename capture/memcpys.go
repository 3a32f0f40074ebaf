package capture

import (
	"cmp"
	"encoding/json"
	"iter"
	"slices"

	"github.com/nsyscheck/nsyscheck/internal/chunked"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// Memcpys holds a capture's GPU memory-copy records in columns: the
// times, size and correlation id of each, and an index into the few kinds
// (direction, source and destination memory) and places (process, device,
// stream) the copies share. A copy takes 40 bytes, where a Memcpy takes
// 104; an application's capture holds hundreds of thousands of them. The
// columns grow by chunks (chunked.List), so that no copy is moved as more come.
// Append adds one, At returns one as a Memcpy. The zero value is empty;
// as JSON it is the list of Memcpy.
type Memcpys struct {
	class, place            chunked.List[int32]
	bytes, start, end, corr chunked.List[int64]

	classes []copyClass
	places  []copyPlace
	placeAt map[copyPlace]int32
}

// copyClass is what a copy is: its direction and the memory at each end.
type copyClass struct {
	kind     vocab.CopyKind
	src, dst vocab.MemKind
}

// copyPlace is where a copy ran.
type copyPlace struct{ pid, device, stream int64 }

// MemcpysOf holds the given copies, in order.
func MemcpysOf(ms ...Memcpy) Memcpys {
	var out Memcpys
	for _, m := range ms {
		out.Append(m)
	}
	return out
}

// Len is the number of copies.
func (m *Memcpys) Len() int { return m.start.Len() }

// IsZero reports whether there are no copies (for JSON's omitzero).
func (m Memcpys) IsZero() bool { return m.start.Len() == 0 }

// Append adds a copy after the others.
func (m *Memcpys) Append(c Memcpy) {
	cl := copyClass{c.Kind, c.Src, c.Dst}
	k := slices.Index(m.classes, cl) // a capture's copies are of a few kinds
	if k < 0 {
		k = len(m.classes)
		m.classes = append(m.classes, cl)
	}
	pl := copyPlace{c.PID, c.Device, c.Stream}
	p, ok := m.placeAt[pl]
	if !ok {
		if m.placeAt == nil {
			m.placeAt = map[copyPlace]int32{}
		}
		p = int32(len(m.places))
		m.places = append(m.places, pl)
		m.placeAt[pl] = p
	}
	m.class.Add(int32(k))
	m.place.Add(p)
	m.bytes.Add(c.Bytes)
	m.start.Add(c.Start)
	m.end.Add(c.End)
	m.corr.Add(c.CorrelationID)
}

// At returns copy i.
func (m *Memcpys) At(i int) Memcpy {
	cl, pl := m.classes[m.class.At(i)], m.places[m.place.At(i)]
	return Memcpy{Kind: cl.kind, Src: cl.src, Dst: cl.dst, Bytes: m.bytes.At(i), Start: m.start.At(i), End: m.end.At(i),
		CorrelationID: m.corr.At(i), Stream: pl.stream, Device: pl.device, PID: pl.pid}
}

// CorrelationID is copy i's correlation id, without the rest of it.
func (m *Memcpys) CorrelationID(i int) int64 { return m.corr.At(i) }

// All yields each copy with its index, in order.
func (m *Memcpys) All() iter.Seq2[int, Memcpy] {
	return func(yield func(int, Memcpy) bool) {
		for i := range m.Len() {
			if !yield(i, m.At(i)) {
				return
			}
		}
	}
}

// Slice returns the copies as a list of Memcpy (a small capture's, or to
// compare two captures' copies).
func (m *Memcpys) Slice() []Memcpy {
	out := make([]Memcpy, 0, m.Len())
	for _, c := range m.All() {
		out = append(out, c)
	}
	return out
}

// sort orders the copies by start, then correlation id, stably.
func (m *Memcpys) sort() {
	less := func(a, b int32) int {
		if c := cmp.Compare(m.start.At(int(a)), m.start.At(int(b))); c != 0 {
			return c
		}
		return cmp.Compare(m.corr.At(int(a)), m.corr.At(int(b)))
	}
	sorted := true
	for i := 1; i < m.Len() && sorted; i++ {
		sorted = less(int32(i-1), int32(i)) <= 0
	}
	if sorted {
		return
	}
	perm := make([]int32, m.Len())
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortStableFunc(perm, less)
	m.class, m.place = gather(m.class, perm), gather(m.place, perm)
	m.bytes, m.start, m.end, m.corr = gather(m.bytes, perm), gather(m.start, perm), gather(m.end, perm), gather(m.corr, perm)
}

// gather returns col in the order perm gives.
func gather[T any](col chunked.List[T], perm []int32) chunked.List[T] {
	var out chunked.List[T]
	for _, p := range perm {
		out.Add(col.At(int(p)))
	}
	return out
}

// MarshalJSON writes the copies as a list of Memcpy.
func (m Memcpys) MarshalJSON() ([]byte, error) { return json.Marshal(m.Slice()) }

// UnmarshalJSON reads a list of Memcpy.
func (m *Memcpys) UnmarshalJSON(b []byte) error {
	var ms []Memcpy
	if err := json.Unmarshal(b, &ms); err != nil {
		return err
	}
	*m = MemcpysOf(ms...)
	return nil
}
