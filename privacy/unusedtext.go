package privacy

import (
	"context"
	"io"
	"sort"
	"strings"
)

// The raw search finds NAME=value with an upper-case name, credential URLs
// and tokens of well-known formats in any bytes; in unused space (a deleted
// row's bytes, free pages) it also runs FindSecrets over each run of text,
// so that what the structured scan finds in a live string — a private key
// block, --password X, db_password=X, "token": "X" — is found there too
// once the row is deleted.

// unusedTextMax bounds the text of one run FindSecrets reads at once: a
// longer run is read in pieces that overlap by unusedTextOverlap bytes.
const (
	unusedTextMax     = 1 << 20
	unusedTextOverlap = 4096
)

// unusedTextMin is the shortest run of text worth reading (password=X).
const unusedTextMin = 8

// textByte is a byte of a string's text: printable ASCII, white space, or a
// byte of a UTF-8 character.
var textByte = byteClass(func(c byte) bool { return c >= 0x20 && c != 0x7f || c == '\t' || c == '\n' || c == '\r' })

// unusedText runs FindSecrets over the runs of text in the unused parts of
// the file (pm.unused), and counts, as unused hits, the named values and
// private keys found there that no other raw hit holds.
func (s *rawSearch) unusedText(ctx context.Context) error {
	if s.pm == nil {
		return nil
	}
	sort.Slice(s.hitSpans, func(i, j int) bool { return s.hitSpans[i].lo < s.hitSpans[j].lo })
	var run []byte
	runAt := int64(-1)
	// read is where the run's last piece read ended, for a run longer
	// than unusedTextMax: its next piece starts unusedTextOverlap bytes
	// before, and what lies whole in those bytes was counted already.
	read := int64(-1)
	flush := func() {
		if len(run) >= unusedTextMin {
			s.textHits(string(run), runAt, read)
		}
		run, runAt, read = run[:0], -1, -1
	}
	buf := make([]byte, 64<<10)
	prevEnd := int64(-1)
	for _, sp := range s.pm.unused {
		if sp.lo != prevEnd {
			flush()
		}
		prevEnd = sp.hi
		for lo := sp.lo; lo < sp.hi && lo < s.size; {
			if ctx != nil && ctx.Err() != nil {
				return context.Cause(ctx)
			}
			n := int(min(int64(len(buf)), sp.hi-lo, s.size-lo))
			if _, err := s.f.ReadAt(buf[:n], lo); err != nil && err != io.EOF {
				return err
			}
			for i, c := range buf[:n] {
				if !textByte[c] {
					flush()
					continue
				}
				if runAt < 0 {
					runAt = lo + int64(i)
				}
				run = append(run, c)
				if len(run) >= unusedTextMax {
					s.textHits(string(run), runAt, read)
					read = runAt + int64(len(run))
					keep := run[len(run)-unusedTextOverlap:]
					runAt += int64(len(run) - len(keep))
					run = append(run[:0], keep...)
				}
			}
			lo += int64(n)
		}
	}
	flush()
	return nil
}

// textHits counts the named values, private keys, Bearer tokens, AWS
// secret keys and URLs with escaped slashes FindSecrets finds in text, a run of text at offset at in unused space, that no hit counted
// already overlaps, nor lies whole before read (the end of the piece of
// the same run read before this one, -1 for none).
func (s *rawSearch) textHits(text string, at, read int64) {
	for _, sec := range unusedSecrets(text) {
		// A URL is the URL search's, unless JSON escaped its slashes.
		escapedURL := sec.Format == FormatURL && !strings.Contains(sec.Value, "://")
		// A Bearer token and an AWS secret key beside its id no other raw
		// search finds.
		if sec.Format != FormatNamed && sec.Format != FormatPrivateKey && sec.Format != FormatBearer &&
			sec.Format != FormatAWSSecret && !escapedURL {
			continue
		}
		lo := at + int64(sec.Offset)
		if hi := lo + int64(len(sec.Value)); hi <= read || s.heldByHit(lo, hi) {
			continue
		}
		s.add(&s.free, KindSecret, sec.Name, sec.Value, lo)
	}
}

// unusedSecrets returns what FindSecrets finds in text, a run of text in
// unused space, and what it finds once the first byte or two are dropped
// where they may be a deleted record's header glued to its string's first
// word: "=--password X", "Gtoken=X", "Asudo mysql -pX" hide the option,
// the name or the command from FindSecrets, which reads the glued bytes as
// part of the word. What the second reading finds that overlaps nothing
// the first found is added, by offset. The second reading is of the first
// line alone, up to gluedReach bytes: what the first word hides stands
// beside it, and a run of many rows' text is not read three times.
func unusedSecrets(text string) []Secret {
	found := FindSecrets(text)
	for k := 1; k <= 2 && k < len(text); k++ {
		if !gluedWord(text, k) {
			continue
		}
		for _, sec := range FindSecrets(firstLine(text[k:])) {
			sec.Offset += k
			if !overlapsAny(found, sec) {
				found = append(found, sec)
			}
		}
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].Offset < found[j].Offset })
	return found
}

// gluedReach bounds what unusedSecrets reads again after glued bytes.
const gluedReach = 1024

// firstLine returns text up to its first line end, or up to the last
// white space before gluedReach bytes where the line is longer (a value is
// not cut).
func firstLine(text string) string {
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		text = text[:i]
	}
	if len(text) <= gluedReach {
		return text
	}
	text = text[:gluedReach]
	if i := strings.LastIndexAny(text, " \t\x00"); i > 0 {
		text = text[:i]
	}
	return text
}

// gluedWord reports whether dropping the first k bytes of text changes
// what FindSecrets reads its first word as: an option (=--password X), a
// name of a secret before "=" or ":" (5token=X), or a word that runs the
// command after it (=sudo mysql -pX). Where the glued bytes hide nothing
// (Xdb_password=X names a password either way), text is not read again.
func gluedWord(text string, k int) bool {
	end := 0
	for end < len(text) && !isArgSep(text[end]) {
		end++
	}
	w := text[:end]
	if len(w) <= k {
		return false
	}
	v := w[k:]
	switch {
	case v[0] == '-' && w[0] != '-':
		return true
	case runsNext(v) && !runsNext(w):
		return true
	}
	name := func(s string) string {
		if i := strings.IndexAny(s, "=:"); i > 0 {
			return strings.Trim(s[:i], `"'`)
		}
		return ""
	}
	n := name(v)
	return n != "" && secretName(n) && !secretName(name(w))
}

// runsNext reports whether w runs the command after it, as commandAt
// reads it.
func runsNext(w string) bool {
	return w == "sudo" || w == "env" || w == "exec" || w == "time" || w == "nohup"
}

// overlapsAny reports whether sec overlaps one of found.
func overlapsAny(found []Secret, sec Secret) bool {
	for _, o := range found {
		if sec.Offset < o.Offset+len(o.Value) && o.Offset < sec.Offset+len(sec.Value) {
			return true
		}
	}
	return false
}

// heldByHit reports whether the bytes [lo, hi) overlap a hit the other raw
// searches counted in unused space (s.hitSpans, sorted by their start).
func (s *rawSearch) heldByHit(lo, hi int64) bool {
	i := sort.Search(len(s.hitSpans), func(i int) bool { return s.hitSpans[i].lo >= hi })
	for j := i - 1; j >= 0 && j >= i-64; j-- {
		if s.hitSpans[j].hi > lo {
			return true
		}
	}
	return false
}
