// Package ctlchar escapes the characters that let printed text act on a
// terminal instead of being read: a GPU or NVTX name holding ESC ] (set the
// window title), ESC [2J (clear the screen), BEL or CR (overwrite the line)
// is shown as the text \x1b, \x07, \x0d, never sent raw.
//
// Escaped are the C0 controls except tab and newline (as \xNN), DEL and
// the C1 controls U+0080-U+009F (as \uNNNN: 8-bit terminals read U+009B as
// ESC [), the Unicode bidirectional controls that reorder what is shown
// (\u202e), the characters that take no room on the screen (zero-width
// spaces and joiners \u200b-\u200d, the word joiner and invisible operators
// \u2060-\u2064, the byte order mark \ufeff), which make two names that
// differ look alike, and bytes that are not UTF-8 (\xNN). The \uNNNN form is also a
// JSON string escape, so the JSON encoding/json writes (which escapes C0
// itself but passes DEL, C1 and bidi controls through) stays valid JSON
// holding exactly the same strings after escaping.
package ctlchar

import (
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// needsEscape reports whether the rune r (decoded from size bytes) is
// escaped; r is utf8.RuneError with size 1 for a byte that is not UTF-8.
func needsEscape(r rune, size int) bool {
	switch {
	case r == utf8.RuneError && size == 1:
		return true
	case r < 0x20:
		return r != '\t' && r != '\n'
	case r >= 0x7f && r <= 0x9f:
		return true
	}
	return isBidi(r) || isInvisible(r)
}

// isInvisible reports whether r takes no room where it is shown: a
// zero-width space or joiner, the word joiner or an invisible operator, or
// the byte order mark (a zero-width no-break space inside text).
func isInvisible(r rune) bool {
	return r >= 0x200b && r <= 0x200d || r >= 0x2060 && r <= 0x2064 || r == 0xfeff
}

// isBidi reports whether r is a bidirectional formatting control, which
// makes a terminal or browser show text in an order other than its own.
func isBidi(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

const hexDigits = "0123456789abcdef"

// appendEscaped appends the escape of the rune r read from the bytes b.
func appendEscaped(dst []byte, r rune, b []byte) []byte {
	if r == utf8.RuneError && len(b) == 1 || r < 0x20 {
		return append(dst, '\\', 'x', hexDigits[b[0]>>4], hexDigits[b[0]&0xf])
	}
	s := strconv.FormatInt(int64(r), 16)
	dst = append(dst, '\\', 'u')
	for i := len(s); i < 4; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// Escape returns s with every control character escaped (see the package
// comment); a string without any is returned as it is.
func Escape(s string) string {
	if !Has(s) {
		return s
	}
	return string(appendAll(nil, []byte(s)))
}

// Line returns s escaped for a place in one line of text (a file's path, a
// name): as Escape, and a newline too (\x0a), which would otherwise start
// a line of the string's own below the tool's, one that may read as the
// tool's.
func Line(s string) string {
	s = Escape(s)
	if !strings.Contains(s, "\n") {
		return s
	}
	return strings.ReplaceAll(s, "\n", `\x0a`)
}

// Has reports whether s holds a character Escape escapes.
func Has(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if needsEscape(r, size) {
			return true
		}
		i += size
	}
	return false
}

// appendAll appends p to dst with its control characters escaped.
func appendAll(dst, p []byte) []byte {
	for i := 0; i < len(p); {
		c := p[i]
		if c >= 0x20 && c < 0x7f || c == '\t' || c == '\n' {
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		if needsEscape(r, size) {
			dst = appendEscaped(dst, r, p[i:i+size])
		} else {
			dst = append(dst, p[i:i+size]...)
		}
		i += size
	}
	return dst
}

// Writer escapes the control characters of everything written through it
// before passing it on to W. A character whose bytes are split between two
// writes is held back until the next write completes it (or Flush), so that
// a split character is never taken for bytes that are not UTF-8. A Writer
// may be used from several goroutines.
type Writer struct {
	W       io.Writer
	mu      sync.Mutex
	pending []byte // the start of a character cut off by the last write
}

// Write escapes p and writes it to W; it reports len(p) written on success.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	data := p
	if len(w.pending) > 0 {
		data = append(w.pending, p...)
		w.pending = nil
	}
	cut := incompleteTail(data)
	out := appendAll(make([]byte, 0, len(data)+16), data[:len(data)-cut])
	if cut > 0 {
		w.pending = append([]byte(nil), data[len(data)-cut:]...)
	}
	if _, err := w.W.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what a cut-off character left held back, escaped as bytes
// that are not UTF-8 since no write completed it.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pending) == 0 {
		return nil
	}
	out := appendAll(nil, w.pending)
	w.pending = nil
	_, err := w.W.Write(out)
	return err
}

// Unwrap returns the writer below.
func (w *Writer) Unwrap() io.Writer { return w.W }

// incompleteTail returns how many bytes at the end of p start a UTF-8
// character that the bytes after p could still complete (0 to 3).
func incompleteTail(p []byte) int {
	for n := 1; n <= 3 && n <= len(p); n++ {
		c := p[len(p)-n]
		if c < 0x80 {
			return 0 // ASCII: nothing is cut off
		}
		if c >= 0xc0 { // a leading byte: does it want more than it has?
			if want := leadLen(c); want > n {
				return n
			}
			return 0
		}
	}
	return 0
}

// leadLen is the length of the UTF-8 sequence a leading byte starts.
func leadLen(c byte) int {
	switch {
	case c >= 0xf0:
		return 4
	case c >= 0xe0:
		return 3
	}
	return 2
}
