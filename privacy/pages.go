package privacy

import (
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/nsyscheck/nsyscheck/internal/sqlitefile"
)

// span is a half-open byte range [lo, hi) of a file.
type span struct{ lo, hi int64 }

// pageMap knows which bytes of a SQLite database file hold live content —
// page headers, cell pointers, cells and the used part of overflow pages —
// and which are unused: free-list pages, the gap between the cell pointers
// and the cell content, freeblocks, the tail of the last overflow page of a
// record and reserved bytes. Stale bytes of deleted or moved rows survive in
// the unused parts until the file is rebuilt (VACUUM).
//
// It also knows which b-tree pages hold no text: pages whose cells are
// numbers only (every record serial type below 12, no overflow), such as
// the pages of the CUPTI_ACTIVITY_KIND_* tables. Their live bytes cannot
// hold a string, so the raw search reads only their unused parts.
type pageMap struct {
	pageSize int64
	nPages   int64
	unused   []span   // sorted, disjoint
	numeric  []uint64 // bit p: page p is a b-tree page whose live bytes hold no text
	// textRoots tells, for each root page walked, whether a page of its
	// b-tree holds text.
	textRoots map[int64]bool
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

func (m *pageMap) isNumeric(p int64) bool {
	return m.numeric[p>>6]&(1<<(p&63)) != 0
}

// regions calls fn, in file order, for each maximal byte range the raw
// search has to read: every unused byte, and every live byte of a page other
// than a numbers-only b-tree page. size is the file size; bytes after the
// last whole page are unused.
func (m *pageMap) regions(size int64, fn func(lo, hi int64) error) error {
	var cur span
	emit := func(lo, hi int64) error {
		if lo >= hi {
			return nil
		}
		if cur.hi == lo && cur.hi > cur.lo {
			cur.hi = hi
			return nil
		}
		if cur.hi > cur.lo {
			if err := fn(cur.lo, cur.hi); err != nil {
				return err
			}
		}
		cur = span{lo, hi}
		return nil
	}
	ui := 0
	for p := int64(1); p <= m.nPages; p++ {
		base, end := (p-1)*m.pageSize, p*m.pageSize
		if !m.isNumeric(p) {
			if err := emit(base, end); err != nil {
				return err
			}
			continue
		}
		for ui < len(m.unused) && m.unused[ui].hi <= base {
			ui++
		}
		for k := ui; k < len(m.unused) && m.unused[k].lo < end; k++ {
			if err := emit(max(m.unused[k].lo, base), min(m.unused[k].hi, end)); err != nil {
				return err
			}
		}
	}
	if err := emit(m.nPages*m.pageSize, size); err != nil {
		return err
	}
	if cur.hi > cur.lo {
		return fn(cur.lo, cur.hi)
	}
	return nil
}

// Page states of the walker.
const (
	pageSeen    = 1 << iota // reached as a b-tree or overflow page
	pageBtree               // its b-tree cells were read; its unused parts are in walker.btUnused
	pageNumeric             // a b-tree page whose cells hold no text
)

// buildPageMap walks every b-tree of the database file f (size bytes) from
// the given root pages (page 1, the schema, is always walked) and the free
// list. It reads one page at a time, so its memory does not follow the file
// size beyond a few bytes a page.
func buildPageMap(f io.ReaderAt, size int64, roots []int64) (*pageMap, error) {
	if size < 100 {
		return nil, fmt.Errorf("not a SQLite database file")
	}
	hdr, err := sqlitefile.ReadHeader(f)
	if err != nil {
		return nil, err
	}
	pageSize := hdr.PageSize
	usable := pageSize - hdr.Reserved
	nPages := size / pageSize
	w := &walker{f: f, pageSize: pageSize, usable: usable, nPages: nPages,
		state: make([]byte, nPages+1), other: make(map[int64][]span)}

	all := append([]int64{1}, roots...)
	textRoots := map[int64]bool{}
	for _, r := range all {
		w.anyText = false
		if err := w.tree(r, 0); err != nil {
			return nil, err
		}
		textRoots[r] = textRoots[r] || w.anyText
	}
	// Pointer-map pages of auto-vacuum databases hold only page numbers;
	// treat them as used so their zero bytes do not count as unused.
	if hdr.AutoVacuum {
		entries := usable / 5
		for p := int64(2); p <= nPages; p += entries + 1 {
			w.mark(p, 0, pageSize)
		}
	}
	// Free-list trunk pages: only the next-trunk pointer, the count and the
	// leaf page numbers are live; leaf pages are entirely unused.
	trunk := hdr.FreeTrunk
	for seen := 0; trunk != 0; seen++ {
		if trunk > nPages || seen > int(nPages) {
			return nil, fmt.Errorf("free list points outside the file (page %d)", trunk)
		}
		pg, err := w.read(trunk, 0)
		if err != nil {
			return nil, err
		}
		n := int64(binary.BigEndian.Uint32(pg[4:8]))
		if 8+4*n > usable {
			return nil, fmt.Errorf("free-list trunk page %d lists %d pages", trunk, n)
		}
		w.mark(trunk, 0, 8+4*n)
		trunk = int64(binary.BigEndian.Uint32(pg[:4]))
	}

	slices.SortFunc(w.btUnused, func(a, b span) int { return cmpInt64(a.lo, b.lo) })
	m := &pageMap{pageSize: pageSize, nPages: nPages, numeric: make([]uint64, nPages/64+1), textRoots: textRoots}
	bi := 0
	var scratch []span
	for p := int64(1); p <= nPages; p++ {
		base := (p - 1) * pageSize
		used := w.other[p]
		if w.state[p]&pageBtree != 0 {
			j := bi
			for j < len(w.btUnused) && w.btUnused[j].lo < base+pageSize {
				j++
			}
			free := w.btUnused[bi:j]
			bi = j
			if len(used) == 0 {
				for _, u := range free {
					m.add(u.lo, u.hi)
				}
				if w.state[p]&pageNumeric != 0 {
					m.numeric[p>>6] |= 1 << (p & 63)
				}
				continue
			}
			// A page also claimed as another kind (a damaged file): its
			// unused bytes are those neither claim.
			scratch = scratch[:0]
			cur := int64(0)
			for _, u := range free {
				if u.lo-base > cur {
					scratch = append(scratch, span{cur, u.lo - base})
				}
				cur = u.hi - base
			}
			if cur < pageSize {
				scratch = append(scratch, span{cur, pageSize})
			}
			used = append(scratch, used...)
		}
		slices.SortFunc(used, func(a, b span) int { return cmpInt64(a.lo, b.lo) })
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
	if tail := nPages * pageSize; tail < size {
		m.add(tail, size)
	}
	return m, nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (m *pageMap) add(lo, hi int64) {
	if n := len(m.unused); n > 0 && m.unused[n-1].hi == lo {
		m.unused[n-1].hi = hi
		return
	}
	m.unused = append(m.unused, span{lo, hi})
}

type walker struct {
	f        io.ReaderAt
	pageSize int64
	usable   int64
	nPages   int64
	state    []byte           // page -> pageSeen, pageBtree, pageNumeric
	other    map[int64][]span // page -> live ranges of overflow, free-list trunk and pointer-map pages
	btUnused []span           // unused ranges (file offsets) of the b-tree pages read so far
	bufs     [][]byte         // one page buffer per b-tree depth
	spans    [][]span         // one scratch list of live ranges per b-tree depth
	anyText  bool             // a page of the tree being walked holds text
}

func (w *walker) mark(page, lo, hi int64) {
	w.other[page] = append(w.other[page], span{lo, hi})
}

// read returns page p, in the buffer of the given depth.
func (w *walker) read(p int64, depth int) ([]byte, error) {
	if p < 1 || p > w.nPages {
		return nil, fmt.Errorf("page %d is outside the file (%d pages)", p, w.nPages)
	}
	for len(w.bufs) <= depth {
		w.bufs = append(w.bufs, make([]byte, w.pageSize))
		w.spans = append(w.spans, nil)
	}
	pg := w.bufs[depth]
	if _, err := w.f.ReadAt(pg, (p-1)*w.pageSize); err != nil {
		return nil, fmt.Errorf("page %d: %w", p, err)
	}
	return pg, nil
}

func (w *walker) tree(p int64, depth int) error {
	if depth > 64 {
		return fmt.Errorf("b-tree deeper than 64 levels at page %d", p)
	}
	if p >= 1 && p <= w.nPages && w.state[p] != 0 {
		return nil
	}
	pg, err := w.read(p, depth)
	if err != nil {
		return err
	}
	w.state[p] |= pageSeen
	used := w.spans[depth][:0]
	h := int64(0)
	if p == 1 {
		h = 100
		used = append(used, span{0, 100}) // the file header
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
	used = append(used, span{h, h + hdr + 2*ncells})
	heads := len(used) // the headers' spans; the cells' follow
	text := false
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
			used = append(used, span{off, off + n + int64(k)})
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
		used = append(used, span{off, off + end})
		if !text && (overflow || recordHoldsText(cell[n:n+local])) {
			text = true
		}
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
	w.spans[depth] = used

	// The page's unused parts: what no live range covers. SQLite writes a
	// page's cells from its end down, so that they mostly lie in the
	// reverse of their pointers' order: reversed, they are in order, and
	// sorted only where they are not (only the union of the spans is read
	// below, whatever the order of those that start together).
	byLo := func(a, b span) int { return cmpInt64(a.lo, b.lo) }
	if cells := used[heads:]; slices.IsSortedFunc(cells, func(a, b span) int { return byLo(b, a) }) {
		slices.Reverse(cells)
	}
	if !slices.IsSortedFunc(used, byLo) {
		slices.SortFunc(used, byLo)
	}
	base := (p - 1) * w.pageSize
	cur := int64(0)
	for _, u := range used {
		if u.lo > cur {
			w.btUnused = append(w.btUnused, span{base + cur, base + u.lo})
		}
		cur = max(cur, u.hi)
	}
	if cur < w.pageSize {
		w.btUnused = append(w.btUnused, span{base + cur, base + w.pageSize})
	}
	w.state[p] |= pageBtree
	if !text {
		w.state[p] |= pageNumeric
	}
	w.anyText = w.anyText || text
	return nil
}

// recordHoldsText reports whether a record (the local part of a cell's
// payload) may hold text or a blob: a serial type of 12 or more in its
// header, or a header that does not fit in the local bytes. Serial types
// below 12 are one-byte varints, so every header byte must be below 12.
func recordHoldsText(rec []byte) bool {
	size, k := varint(rec)
	if k == 0 || size < uint64(k) || size > uint64(len(rec)) {
		return true
	}
	for _, c := range rec[k:size] {
		if c >= 12 {
			return true
		}
	}
	return false
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
	var next [4]byte
	for steps := int64(0); remaining > 0; steps++ {
		if steps > w.nPages {
			return fmt.Errorf("overflow chain loops")
		}
		if p < 1 || p > w.nPages {
			return fmt.Errorf("overflow chain: page %d is outside the file (%d pages)", p, w.nPages)
		}
		if _, err := w.f.ReadAt(next[:], (p-1)*w.pageSize); err != nil {
			return fmt.Errorf("overflow chain: page %d: %w", p, err)
		}
		w.state[p] |= pageSeen
		here := min(remaining, w.usable-4)
		w.mark(p, 0, 4+here)
		remaining -= here
		p = int64(binary.BigEndian.Uint32(next[:]))
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
