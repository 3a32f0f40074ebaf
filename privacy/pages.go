package privacy

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// span is a half-open byte range [lo, hi) of a file.
type span struct{ lo, hi int64 }

// pageMap knows which bytes of a SQLite database file hold live content —
// page headers, cell pointers, cells and the used part of overflow pages —
// and which are unused: free-list pages, the gap between the cell pointers
// and the cell content, freeblocks, the tail of the last overflow page of a
// record and reserved bytes. Stale bytes of deleted or moved rows survive in
// the unused parts until the file is rebuilt (VACUUM).
type pageMap struct {
	pageSize int64
	unused   []span // sorted, disjoint
}

// inUnused reports whether the byte at off lies in an unused part of the file.
func (m *pageMap) inUnused(off int64) bool {
	i := sort.Search(len(m.unused), func(i int) bool { return m.unused[i].hi > off })
	return i < len(m.unused) && m.unused[i].lo <= off
}

// unusedBytes is the total size of the unused parts.
func (m *pageMap) unusedBytes() int64 {
	var n int64
	for _, s := range m.unused {
		n += s.hi - s.lo
	}
	return n
}

// buildPageMap walks every b-tree of the database image data from the given
// root pages (page 1, the schema, is always walked) and the free list.
func buildPageMap(data []byte, roots []int64) (*pageMap, error) {
	if len(data) < 100 || string(data[:16]) != "SQLite format 3\x00" {
		return nil, fmt.Errorf("not a SQLite database file")
	}
	pageSize := int64(binary.BigEndian.Uint16(data[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	if pageSize < 512 || pageSize&(pageSize-1) != 0 {
		return nil, fmt.Errorf("bad page size %d in the file header", pageSize)
	}
	usable := pageSize - int64(data[20])
	nPages := int64(len(data)) / pageSize
	w := &walker{data: data, pageSize: pageSize, usable: usable, nPages: nPages,
		used: make(map[int64][]span), kind: make(map[int64]byte)}

	// Page 1 starts with the 100-byte file header.
	w.mark(1, 0, 100)
	all := append([]int64{1}, roots...)
	for _, r := range all {
		if err := w.tree(r, 0); err != nil {
			return nil, err
		}
	}
	// Pointer-map pages of auto-vacuum databases hold only page numbers;
	// treat them as used so their zero bytes do not count as unused.
	if binary.BigEndian.Uint32(data[52:56]) != 0 {
		entries := usable / 5
		for p := int64(2); p <= nPages; p += entries + 1 {
			w.mark(p, 0, pageSize)
			w.kind[p] = 'p'
		}
	}
	// Free-list trunk pages: only the next-trunk pointer, the count and the
	// leaf page numbers are live; leaf pages are entirely unused.
	trunk := int64(binary.BigEndian.Uint32(data[32:36]))
	for seen := 0; trunk != 0; seen++ {
		if trunk > nPages || seen > int(nPages) {
			return nil, fmt.Errorf("free list points outside the file (page %d)", trunk)
		}
		off := (trunk - 1) * pageSize
		n := int64(binary.BigEndian.Uint32(data[off+4 : off+8]))
		if 8+4*n > usable {
			return nil, fmt.Errorf("free-list trunk page %d lists %d pages", trunk, n)
		}
		w.mark(trunk, 0, 8+4*n)
		w.kind[trunk] = 'f'
		for i := int64(0); i < n; i++ {
			leaf := int64(binary.BigEndian.Uint32(data[off+8+4*i : off+12+4*i]))
			if leaf >= 1 && leaf <= nPages {
				w.kind[leaf] = 'f'
			}
		}
		trunk = int64(binary.BigEndian.Uint32(data[off : off+4]))
	}

	m := &pageMap{pageSize: pageSize}
	for p := int64(1); p <= nPages; p++ {
		base := (p - 1) * pageSize
		used := w.used[p]
		sort.Slice(used, func(i, j int) bool { return used[i].lo < used[j].lo })
		cur := int64(0)
		for _, u := range used {
			if u.lo > cur {
				m.add(base+cur, base+u.lo)
			}
			cur = max(cur, u.hi)
		}
		if cur < pageSize {
			m.add(base+cur, base+pageSize)
		}
	}
	if tail := nPages * pageSize; tail < int64(len(data)) {
		m.add(tail, int64(len(data)))
	}
	return m, nil
}

func (m *pageMap) add(lo, hi int64) {
	if n := len(m.unused); n > 0 && m.unused[n-1].hi == lo {
		m.unused[n-1].hi = hi
		return
	}
	m.unused = append(m.unused, span{lo, hi})
}

type walker struct {
	data     []byte
	pageSize int64
	usable   int64
	nPages   int64
	used     map[int64][]span // page -> live ranges, offsets within the page
	kind     map[int64]byte   // page -> 'b' b-tree, 'o' overflow, 'f' free, 'p' pointer map
}

func (w *walker) mark(page, lo, hi int64) {
	w.used[page] = append(w.used[page], span{lo, hi})
}

func (w *walker) page(p int64) ([]byte, error) {
	if p < 1 || p > w.nPages {
		return nil, fmt.Errorf("page %d is outside the file (%d pages)", p, w.nPages)
	}
	return w.data[(p-1)*w.pageSize : p*w.pageSize], nil
}

func (w *walker) tree(p int64, depth int) error {
	if depth > 64 {
		return fmt.Errorf("b-tree deeper than 64 levels at page %d", p)
	}
	if _, seen := w.kind[p]; seen {
		return nil
	}
	pg, err := w.page(p)
	if err != nil {
		return err
	}
	w.kind[p] = 'b'
	h := int64(0)
	if p == 1 {
		h = 100
	}
	typ := pg[h]
	hdr := int64(8)
	switch typ {
	case 2, 5:
		hdr = 12
	case 10, 13:
	default:
		return fmt.Errorf("page %d: unknown b-tree page type %d", p, typ)
	}
	ncells := int64(binary.BigEndian.Uint16(pg[h+3 : h+5]))
	if h+hdr+2*ncells > w.usable {
		return fmt.Errorf("page %d: %d cells do not fit", p, ncells)
	}
	w.mark(p, h, h+hdr+2*ncells)
	if hdr == 12 {
		right := int64(binary.BigEndian.Uint32(pg[h+8 : h+12]))
		if err := w.tree(right, depth+1); err != nil {
			return err
		}
	}
	for i := int64(0); i < ncells; i++ {
		off := int64(binary.BigEndian.Uint16(pg[h+hdr+2*i : h+hdr+2*i+2]))
		if off < h+hdr || off >= w.usable {
			return fmt.Errorf("page %d: cell %d at bad offset %d", p, i, off)
		}
		cell := pg[off:w.usable]
		var n int64 // bytes read so far in the cell
		var child int64
		if typ == 2 || typ == 5 {
			if len(cell) < 4 {
				return fmt.Errorf("page %d: cell %d truncated", p, i)
			}
			child = int64(binary.BigEndian.Uint32(cell[:4]))
			n = 4
		}
		if typ == 5 { // table interior: child + rowid only
			_, k := varint(cell[n:])
			if k == 0 {
				return fmt.Errorf("page %d: cell %d truncated", p, i)
			}
			w.mark(p, off, off+n+int64(k))
			if err := w.tree(child, depth+1); err != nil {
				return err
			}
			continue
		}
		payload, k := varint(cell[n:])
		if k == 0 {
			return fmt.Errorf("page %d: cell %d truncated", p, i)
		}
		n += int64(k)
		if typ == 13 {
			_, k = varint(cell[n:])
			if k == 0 {
				return fmt.Errorf("page %d: cell %d truncated", p, i)
			}
			n += int64(k)
		}
		local, overflow := w.local(int64(payload), typ == 13)
		end := n + local
		if overflow {
			end += 4
		}
		if end > int64(len(cell)) {
			return fmt.Errorf("page %d: cell %d runs past the page", p, i)
		}
		w.mark(p, off, off+end)
		if overflow {
			first := int64(binary.BigEndian.Uint32(cell[n+local : n+local+4]))
			if err := w.overflow(first, int64(payload)-local); err != nil {
				return fmt.Errorf("page %d: cell %d: %w", p, i, err)
			}
		}
		if typ == 2 {
			if err := w.tree(child, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// local returns how many payload bytes a cell keeps on its own page and
// whether the rest spills to overflow pages (SQLite file format, 1.6).
func (w *walker) local(p int64, table bool) (int64, bool) {
	u := w.usable
	x := u - 35
	if !table {
		x = (u-12)*64/255 - 23
	}
	if p <= x {
		return p, false
	}
	m := (u-12)*32/255 - 23
	k := m + (p-m)%(u-4)
	if k <= x {
		return k, true
	}
	return m, true
}

func (w *walker) overflow(p, remaining int64) error {
	for steps := int64(0); remaining > 0; steps++ {
		if steps > w.nPages {
			return fmt.Errorf("overflow chain loops")
		}
		pg, err := w.page(p)
		if err != nil {
			return fmt.Errorf("overflow chain: %w", err)
		}
		w.kind[p] = 'o'
		here := min(remaining, w.usable-4)
		w.mark(p, 0, 4+here)
		remaining -= here
		p = int64(binary.BigEndian.Uint32(pg[:4]))
	}
	return nil
}

// varint decodes a SQLite variable-length integer; k is 0 when b is too short.
func varint(b []byte) (v uint64, k int) {
	for i := 0; i < 9; i++ {
		if i >= len(b) {
			return 0, 0
		}
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i]&0x80 == 0 {
			return v, i + 1
		}
	}
	return v, 9
}
