package privacy

import (
	"bytes"
	"context"
	"io"
	"sort"
	"strconv"
	"strings"
)

// The raw search finds, in file order, exactly the non-overlapping matches
// rawEnvRE.FindAll and rawURLRE.FindAll would find, without running a
// regular expression over every byte: it looks for the fixed part of each
// pattern ("=" and "://") with bytes.IndexByte and bytes.Index, and reads
// the name, value, user, password and host around each hit byte by byte.
// Bytes of 0x80 and above never belong to a name, a scheme or an
// environment value, and always belong to a URL's user, password and host,
// as they do for the regular expressions (as runes or U+FFFD).
var (
	envNameByte  = byteClass(func(c byte) bool { return c == '_' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' })
	envStartByte = byteClass(func(c byte) bool { return c >= 'A' && c <= 'Z' })
	envValueByte = byteClass(func(c byte) bool { return c >= 0x20 && c <= 0x7e && c != '"' && c != ';' })
	schemeByte   = byteClass(func(c byte) bool {
		return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '.' || c == '-'
	})
	schemeStartByte = byteClass(func(c byte) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' })
	urlUserByte     = byteClass(func(c byte) bool { return c > ' ' && !strings.ContainsRune(`/:@"';`, rune(c)) })
	urlHostByte     = byteClass(func(c byte) bool { return c > ' ' && !strings.ContainsRune(`/"';`, rune(c)) })
)

func byteClass(in func(byte) bool) *[256]bool {
	var t [256]bool
	for c := 0; c < 256; c++ {
		t[c] = in(byte(c))
	}
	return &t
}

// rawWindow is how much of the file the raw search holds at once (more
// only while one string is longer); a variable so that tests can make it
// small.
var rawWindow int64 = 1 << 20

// rawLookback is how far before a searched range a name or scheme may start.
const rawLookback = 4096

// rawSearch searches byte ranges of a file, in increasing order, for
// NAME=value strings and credential URLs, and gathers what addRaw reports.
type rawSearch struct {
	ctx  context.Context // the search stops once it is cancelled; nil never
	f    io.ReaderAt
	size int64
	buf  []byte // the file's bytes [lo, lo+len(buf))
	lo   int64

	pm      *pageMap
	covered map[string]bool

	envEnd, urlEnd int64 // end of the last match of each pattern
	// allowed maps a value to the names of allowed variables seen with it,
	// to recognise the tail of one that compression cut off.
	allowed  map[string][]string
	inSecret []span // NAME=value hits already reported as credentials
	env, url rawHits
	// text counts what FindSecrets finds in the text of unused space
	// (unusedText) that the other searches do not.
	free rawHits
	// hitSpans are the bytes of the other searches' hits in unused space.
	hitSpans []span
	// tokEnd is, per token prefix, the end of its last match; tok counts
	// the bare tokens of well-known formats (ghp_..., AKIA...).
	tokEnd map[string]int64
	tok    rawHits
	// tokRun is, per token prefix, the last run of its format's bytes read.
	tokRun map[string]*tokenRun
}

type rawKey struct {
	kind        Kind
	name, value string
	unused      bool
}

// rawHits counts raw hits by name, value and space, in first-seen order.
type rawHits struct {
	counts map[rawKey]int
	first  map[rawKey]int64
	order  []rawKey
	// unused is how many distinct values in unused space counts holds;
	// past rawUnusedMax, the hits of further values are only counted, by
	// kind and name, in over.
	unused int
	over   map[rawKey]*overCount
	overAt []rawKey // over's keys, in first-seen order
}

// overCount counts the hits in unused space past rawUnusedMax distinct
// values: how many, and the first one's offset.
type overCount struct {
	n     int
	first int64
}

// OtherValues is the masked value of a finding that counts the hits in
// unused space of more distinct values than the scan keeps (rawUnusedMax).
const OtherValues = "…(other values)"

// rawUnusedMax bounds the distinct values in unused space one kind of raw
// search keeps (each one a finding, its value kept for Scrub): a file whose
// deleted rows hold millions of distinct stale values is reported with
// these, and the rest counted by name. Scrub's copy keeps no unused space,
// so the values not kept leave no byte in it.
var rawUnusedMax = 10_000

func newRawSearch(f io.ReaderAt, size int64, pm *pageMap, covered map[string]bool) *rawSearch {
	return &rawSearch{f: f, size: size, pm: pm, covered: covered, allowed: map[string][]string{},
		env: rawHits{counts: map[rawKey]int{}, first: map[rawKey]int64{}},
		url: rawHits{counts: map[rawKey]int{}, first: map[rawKey]int64{}},
		tok: rawHits{counts: map[rawKey]int{}, first: map[rawKey]int64{}}, free: rawHits{counts: map[rawKey]int{}, first: map[rawKey]int64{}}, tokEnd: map[string]int64{},
		tokRun: map[string]*tokenRun{}}
}

// load makes the file's bytes [lo, hi) (cut at the end of the file)
// available in s.buf, with up to rawLookback bytes before lo.
func (s *rawSearch) load(lo, hi int64) error {
	hi = min(hi, s.size)
	if lo >= s.lo && hi <= s.lo+int64(len(s.buf)) {
		return nil
	}
	if s.ctx != nil && s.ctx.Err() != nil {
		return context.Cause(s.ctx) // stopped within one window
	}
	start := max(0, lo-rawLookback)
	if lo >= s.lo && lo-s.lo < rawLookback {
		start = s.lo // keep what is already before lo
	}
	end := min(s.size, max(hi, start+rawWindow))
	n := int(end - start)
	if cap(s.buf) < n {
		s.buf = make([]byte, n)
	}
	s.buf = s.buf[:n]
	s.lo = start
	if _, err := s.f.ReadAt(s.buf, start); err != nil && err != io.EOF {
		return err
	}
	return nil
}

// byteAt returns the file's byte at off; ok is false past the end.
func (s *rawSearch) byteAt(off int64) (byte, bool, error) {
	if off >= s.size {
		return 0, false, nil
	}
	if err := s.load(off, off+1); err != nil {
		return 0, false, err
	}
	return s.buf[off-s.lo], true, nil
}

// runEnd returns the offset of the first byte at or after from that is not
// in class, or the file size.
func (s *rawSearch) runEnd(from int64, class *[256]bool) (int64, error) {
	for from < s.size {
		if from >= s.lo+int64(len(s.buf)) || from < s.lo {
			if err := s.load(from, from+rawWindow/2); err != nil {
				return 0, err
			}
		}
		seg := s.buf[from-s.lo:]
		i := 0
		for i < len(seg) && class[seg[i]] {
			i++
		}
		from += int64(i)
		if i < len(seg) {
			return from, nil
		}
	}
	return s.size, nil
}

// text returns the file's bytes [lo, hi) as a string.
func (s *rawSearch) text(lo, hi int64) (string, error) {
	if err := s.load(lo, hi); err != nil {
		return "", err
	}
	return string(s.buf[lo-s.lo : hi-s.lo]), nil
}

// search looks for matches whose "=" or "://" lies in [a, b). Names and
// schemes may start before a, values and hosts run on past b, as they would
// in a search of the whole file.
func (s *rawSearch) search(a, b int64) error {
	if err := s.searchEnv(a, b); err != nil {
		return err
	}
	if err := s.searchURL(a, b); err != nil {
		return err
	}
	return s.searchTokens(a, b)
}

// searchTokens looks for the tokens of well-known credential formats
// (tokenFormats: ghp_..., AKIA..., xoxb-..., eyJ...) that start in [a, b),
// as FindSecrets finds them in a string: the prefix where a token may
// start, enough bytes of the format's class after it, of the format's
// shape; each run of a format's bytes is read once (tokenRun). A private
// key block spans lines and the structured scan finds it; the other
// detectors need a name or a neighbour the raw bytes do not give.
func (s *rawSearch) searchTokens(a, b int64) error {
	for fi := range tokenFormats {
		tf := &tokenFormats[fi]
		prefix := []byte(tf.prefix)
		run := s.tokRun[tf.prefix]
		for pos := max(a, s.tokEnd[tf.prefix]); pos < b; {
			hi := min(b, pos+rawWindow/2)
			if err := s.load(pos, hi+int64(len(prefix))); err != nil {
				return err
			}
			j := bytes.Index(s.buf[pos-s.lo:min(hi+int64(len(prefix)), s.lo+int64(len(s.buf)))-s.lo], prefix)
			if j < 0 || pos+int64(j) >= b {
				pos = hi
				continue
			}
			at := pos + int64(j)
			pos = at + 1
			if at > 0 {
				c, _, err := s.byteAt(at - 1)
				if err != nil {
					return err
				}
				if !tf.startsAfter(c) {
					continue
				}
			}
			body := at + int64(len(prefix))
			if !run.covers(int(body)) {
				end, err := s.runEnd(body, tf.class)
				if err != nil {
					return err
				}
				text, err := s.text(body, end)
				if err != nil {
					return err
				}
				run = newTokenRun(tf, int(body), text)
				s.tokRun[tf.prefix] = run
			}
			head, err := s.text(at, min(at+tokenHead, int64(run.end)))
			if err != nil {
				return err
			}
			end, ok := tf.token(run, int(at), head)
			if !ok {
				continue
			}
			tok, err := s.text(at, int64(end))
			if err != nil {
				return err
			}
			s.tokEnd[tf.prefix], pos = int64(end), int64(end)
			s.tokenHit(tok, at)
		}
	}
	return nil
}

// tokenHit counts a bare token, unless it is part of a variable already
// reported as a credential, or, in live space, a token the structured scan
// reported with the bytes of the next field of its record glued on (a
// table's name stored beside the same name: "ghp_...notes").
func (s *rawSearch) tokenHit(tok string, start int64) {
	for _, sp := range s.inSecret {
		if sp.lo <= start && start < sp.hi {
			return
		}
	}
	if s.pm != nil && !s.pm.inUnused(start) {
		for nv := range s.covered {
			if v, ok := strings.CutPrefix(nv, "="); ok && v != "" && strings.HasPrefix(tok, v) {
				return
			}
		}
	}
	s.add(&s.tok, KindSecret, "", tok, start)
}

func (s *rawSearch) searchEnv(a, b int64) error {
	for pos := max(a, s.envEnd); pos < b; {
		hi := min(b, pos+rawWindow/2)
		if err := s.load(pos, hi); err != nil {
			return err
		}
		j := bytes.IndexByte(s.buf[pos-s.lo:hi-s.lo], '=')
		if j < 0 {
			pos = hi
			continue
		}
		eq := pos + int64(j)
		pos = eq + 1
		// The name: the run of name bytes before "=", from its first
		// upper-case letter, at least two bytes.
		start := eq
		for floor := max(s.envEnd, s.lo); start > floor && envNameByte[s.buf[start-1-s.lo]]; start-- {
		}
		for start < eq-1 && !envStartByte[s.buf[start-s.lo]] {
			start++
		}
		if start >= eq-1 {
			continue
		}
		name := string(s.buf[start-s.lo : eq-s.lo])
		vlo := eq + 1
		c, ok, err := s.byteAt(vlo)
		if err != nil {
			return err
		}
		if ok && c == '"' {
			vlo++
		}
		end, err := s.runEnd(vlo, envValueByte)
		if err != nil {
			return err
		}
		value, err := s.text(vlo, end)
		if err != nil {
			return err
		}
		next, more, err := s.byteAt(end)
		if err != nil {
			return err
		}
		clean := !more || next == 0 || next == ';' || next == '"'
		s.envEnd, pos = end, end
		s.envHit(name, value, start, end, clean)
	}
	return nil
}

func (s *rawSearch) searchURL(a, b int64) error {
	for pos := max(a, s.urlEnd); pos < b; {
		hi := min(b, pos+rawWindow/2)
		if err := s.load(pos, hi+2); err != nil {
			return err
		}
		j := bytes.Index(s.buf[pos-s.lo:min(hi+2, s.lo+int64(len(s.buf)))-s.lo], []byte("://"))
		if j < 0 {
			pos = hi
			continue
		}
		sep := pos + int64(j)
		pos = sep + 1
		start := sep
		for floor := max(s.urlEnd, s.lo); start > floor && schemeByte[s.buf[start-1-s.lo]]; start-- {
		}
		for start < sep && !schemeStartByte[s.buf[start-s.lo]] {
			start++
		}
		if start >= sep {
			continue
		}
		// user ":" password "@" host: the user may be empty, the password
		// and host are at least one byte, the password runs to the last "@"
		// a host follows (urlCredRE).
		user := sep + 3
		userEnd, err := s.runEnd(user, urlUserByte)
		if err != nil {
			return err
		}
		if c, ok, err := s.byteAt(userEnd); err != nil {
			return err
		} else if !ok || c != ':' {
			continue
		}
		authEnd, err := s.runEnd(userEnd+1, urlHostByte)
		if err != nil {
			return err
		}
		auth, err := s.text(userEnd+1, authEnd)
		if err != nil {
			return err
		}
		at := passwordEnd(auth)
		if at < 0 {
			continue
		}
		end := userEnd + 1 + int64(at) + 1
		if k := strings.IndexByte(auth[at+1:], '@'); k >= 0 {
			end += int64(k)
		} else {
			end += int64(len(auth) - at - 1)
		}
		u, err := s.text(start, end)
		if err != nil {
			return err
		}
		s.urlEnd, pos = end, end
		s.urlHit(u, start)
	}
	return nil
}

// add counts one hit. With a page map, a hit in live space counts only when
// it is a credential no structured finding already covers; hits in unused
// space all count, marked unused.
func (s *rawSearch) add(h *rawHits, k Kind, name, value string, off int64) {
	unused := s.pm != nil && s.pm.inUnused(off)
	if s.pm != nil && !unused && (k != KindSecret || s.covered[name+"="+value] || s.covered["="+value]) {
		return
	}
	if unused && h != &s.free {
		// The bytes of the hit: a name, its "=", and the value.
		s.hitSpans = append(s.hitSpans, span{off, off + int64(len(name)+1+len(value))})
	}
	key := rawKey{k, name, value, unused}
	if _, ok := h.counts[key]; !ok {
		if unused && h.unused >= rawUnusedMax {
			h.addOver(rawKey{kind: k, name: name, unused: true}, off)
			return
		}
		if unused {
			h.unused++
		}
		h.order = append(h.order, key)
		h.first[key] = off
	}
	h.counts[key]++
}

// addOver counts a hit in unused space past rawUnusedMax distinct values
// under its kind and name (under its kind alone past rawUnusedMax names).
func (h *rawHits) addOver(key rawKey, off int64) {
	if h.over == nil {
		h.over = map[rawKey]*overCount{}
	}
	c := h.over[key]
	if c == nil && len(h.over) >= rawUnusedMax {
		key.name = ""
		c = h.over[key]
	}
	if c == nil {
		c = &overCount{first: off}
		h.over[key] = c
		h.overAt = append(h.overAt, key)
	}
	c.n++
}

func (s *rawSearch) envHit(name, value string, start, end int64, clean bool) {
	v := EnvVar{Name: name, Value: strings.TrimSuffix(value, `"`), HasValue: true}
	off := start
	for _, g := range rawGlue {
		if rest, ok := strings.CutPrefix(v.Name, g); ok && len(rest) > 0 {
			v.Name = rest
			off += int64(len(g))
		}
	}
	if !clean && (len(v.Value) < 8 || !LooksSecretName(v.Name)) {
		return // a fragment: compressed or binary bytes follow
	}
	if !clean && s.gluedInLive(v, off) {
		return
	}
	if v.Value == "" {
		return
	}
	if AllowedEnv(v.Name, nil) || InjectedByNsys(v.Name, v.Value) {
		s.allowed[v.Value] = append(s.allowed[v.Value], v.Name)
	}
	if s.pm == nil && s.inNsysBlock(v, off) {
		return
	}
	if k, ok := classify(v); ok {
		s.add(&s.env, k, v.Name, v.Value, off)
		if k == KindSecret {
			s.inSecret = append(s.inSecret, span{start, end})
		}
	}
}

// gluedInLive reports whether a NAME=value hit at off, in live space, is
// a value the structured scan already read (reported, or Redacted by
// scrub) with the bytes of the record's next field glued on: a string
// cell "export TOKEN=[redacted]" stored before a record header that reads
// as value bytes.
func (s *rawSearch) gluedInLive(v EnvVar, off int64) bool {
	if s.pm == nil || s.pm.inUnused(off) {
		return false
	}
	if strings.HasPrefix(v.Value, Redacted) {
		return true
	}
	for nv := range s.covered {
		if val, ok := strings.CutPrefix(nv, v.Name+"="); ok && val != "" && strings.HasPrefix(v.Value, val) {
			return true
		}
	}
	return false
}

// inNsysBlock reports whether a hit at off is a fragment of nsys's own
// compressed environment block (see InNsysBlock).
func (s *rawSearch) inNsysBlock(v EnvVar, off int64) bool {
	lo := max(0, off-nsysBlockReach)
	before := make([]byte, off-lo)
	if _, err := s.f.ReadAt(before, lo); err != nil && err != io.EOF {
		return false
	}
	return InNsysBlock(v.Name, v.Value, before)
}

// passwordEnd returns where the password of a URL's password "@" host
// (auth, the bytes after the user's ":") ends: at its last "@" with at
// least one byte before it and a byte other than "@" after it, or -1.
func passwordEnd(auth string) int {
	for q := len(auth) - 2; q >= 1; q-- {
		if auth[q] == '@' && auth[q+1] != '@' {
			return q
		}
	}
	return -1
}

func (s *rawSearch) urlHit(u string, start int64) {
	if len(URLCredentials(u)) == 0 || strings.Contains(u, Redacted) {
		return
	}
	// Hits come in offset order, so the spans are sorted.
	i := sort.Search(len(s.inSecret), func(i int) bool { return s.inSecret[i].hi > start })
	if i < len(s.inSecret) && s.inSecret[i].lo <= start {
		return // part of a variable already reported
	}
	if s.covered != nil && coveredURL(s.covered, u) {
		if s.pm == nil || !s.pm.inUnused(start) {
			return
		}
	}
	s.add(&s.url, KindSecret, "", u, start)
}

// tailOfAllowed reports whether NAME=value is what compression left of an
// allowed variable with the same value found in the same file: in a
// .nsys-rep, "VERSION=13.0.2" can be the stored tail of CUDA_VERSION=13.0.2
// whose head is a back-reference. Secrets are never excused this way.
func (s *rawSearch) tailOfAllowed(name, value string) bool {
	for _, full := range s.allowed[value] {
		if len(full) > len(name) && strings.HasSuffix(full, name) {
			return true
		}
	}
	return false
}

// findings appends what was found to r: NAME=value hits, then URLs, each
// in the order of their first offset.
//
// The hits in unused space of values past rawUnusedMax come last, one
// finding a kind and name, its value OtherValues and More counting them.
func (s *rawSearch) findings(r *Report) {
	for _, h := range []*rawHits{&s.env, &s.url, &s.tok, &s.free} {
		for _, key := range h.order {
			if key.kind == KindEnv && s.tailOfAllowed(key.name, key.value) {
				continue
			}
			where := "raw bytes at offset " + strconv.FormatInt(h.first[key], 10)
			if key.unused {
				where += " (" + UnusedPages + ")"
			}
			r.Findings = append(r.Findings, Finding{Kind: key.kind, Name: key.name, Where: where, Offset: h.first[key],
				Masked: maskFor(key.kind, key.value), Unused: key.unused, More: h.counts[key] - 1, value: key.value})
		}
		for _, key := range h.overAt {
			c := h.over[key]
			where := "raw bytes at offset " + strconv.FormatInt(c.first, 10) + " (" + UnusedPages + ")"
			r.Findings = append(r.Findings, Finding{Kind: key.kind, Name: key.name, Where: where, Offset: c.first,
				Masked: OtherValues, Unused: true, More: c.n - 1})
		}
	}
}

// addRaw searches the raw bytes of f (size bytes) for NAME=value strings,
// credential URLs and bare tokens of well-known credential formats. With a page map, it reads only the unused parts and
// the pages that may hold text, a hit in live space is reported only when
// it is a credential no structured finding already covers, and hits in
// unused space are all reported, marked Unused. Without one (a .nsys-rep,
// or pages that could not be parsed), it reads the whole file and reports
// every hit as raw bytes.
func (r *Report) addRaw(ctx context.Context, f io.ReaderAt, size int64, pm *pageMap, covered map[string]bool) error {
	s := newRawSearch(f, size, pm, covered)
	s.ctx = ctx
	var err error
	if pm == nil {
		err = s.search(0, size)
	} else {
		err = pm.regions(size, s.search)
	}
	if err == nil {
		err = s.unusedText(ctx)
	}
	if err != nil {
		return err
	}
	s.findings(r)
	return nil
}
