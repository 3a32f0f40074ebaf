// Package textwrap lays out text a person reads at one width: words filled
// into lines, a number never parted from the unit or word after it
// ("7.6284 ms", "64 MiB", "8 files") nor from the comparison before it
// (">= 1.3"), no word ever broken (a path too long for a line stands whole
// on its own), and a writer that wraps every line written through it, for
// messages, errors and help printed by other code.
package textwrap

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/nsyscheck/nsyscheck/internal/ctlchar"
)

// units are the words that belong to the number before them.
var units = map[string]bool{
	"ns": true, "us": true, "µs": true, "ms": true, "s": true,
	"B": true, "KiB": true, "MiB": true, "GiB": true, "KB": true, "MB": true, "GB": true,
	"GB/s": true, "MB/s": true, "bytes": true, "x": true, "%": true,
}

// isNumber reports whether a word is a number that goes on into the word
// after it, as in "12", "-0.2", "(7.5", "1,024", "207..216"; one that ends
// in punctuation ("6.7,") ends its phrase.
func isNumber(w string) bool {
	w = strings.TrimLeft(w, "([")
	w = strings.TrimPrefix(w, "-")
	if w == "" || w[0] < '0' || w[0] > '9' || w[len(w)-1] < '0' || w[len(w)-1] > '9' {
		return false
	}
	for _, r := range w {
		if !(r >= '0' && r <= '9' || r == '.' || r == ',') {
			return false
		}
	}
	return true
}

// countsWith reports whether a word is what the number before it counts or
// measures: a unit, or a word ("8 files", "10 calls").
func countsWith(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return isUnit(w) || unicode.IsLetter(r)
}

// isUnit reports whether a word is a unit, punctuation after it aside
// ("ms,", "MiB)").
func isUnit(w string) bool {
	return units[strings.TrimRightFunc(w, func(r rune) bool { return r != '%' && unicode.IsPunct(r) })]
}

// tokens splits text into the words lines are filled with: a number and
// the unit or word it counts are one token, a space between them ("7.6 ms",
// "8 files"), and so are a comparison and the number after it. The text is
// escaped first as a table's cell is (ctlchar.Line): a CR, newline,
// vertical tab, form feed or NEL inside a name would otherwise part the
// words there, as a space, where the table shows \x0d.
func tokens(text string) []string {
	words := strings.Fields(ctlchar.Line(text))
	out := make([]string, 0, len(words))
	for i := 0; i < len(words); i++ {
		w := words[i]
		if relations[w] && i+1 < len(words) && isNumber(strings.TrimRight(words[i+1], ",.;:)]")) {
			// A bound stays whole: ">= 1.3".
			w += " " + words[i+1]
			i++
		}
		if i+1 < len(words) && isNumber(lastWord(w)) && countsWith(words[i+1]) {
			w += " " + words[i+1]
			i++
		}
		out = append(out, w)
	}
	return out
}

// relations are the comparisons that belong to the number after them.
var relations = map[string]bool{">=": true, "<=": true, "<": true, ">": true, "=": true}

// lastWord is the last of the words a token holds.
func lastWord(t string) string { return t[strings.LastIndexByte(t, ' ')+1:] }

// Glue joins the words Wrap keeps together (a number and its unit, a
// comparison and its bound) with no-break spaces, for text a browser lays
// out.
func Glue(text string) string {
	toks := tokens(text)
	for i, t := range toks {
		toks[i] = strings.ReplaceAll(t, " ", "\u00a0")
	}
	return strings.Join(toks, " ")
}

// Options shape Wrap's lines.
type Options struct {
	// First starts the first line, Indent every other one.
	First, Indent string
}

// Wrap breaks text into lines of at most width runes. Nothing is cut, and
// no word is broken: a word longer than a line (a path, a command) stands
// whole on a line of its own.
func Wrap(text string, width int, o Options) []string {
	var lines []string
	indentLen := utf8.RuneCountInString(o.Indent)
	line := o.First
	lineLen := utf8.RuneCountInString(o.First)
	empty := true // nothing but the prefix on the line yet
	flush := func() {
		lines = append(lines, strings.TrimRight(line, " "))
		line, lineLen, empty = o.Indent, indentLen, true
	}
	for _, word := range tokens(text) {
		n := utf8.RuneCountInString(word)
		if !empty {
			if lineLen+1+n > width {
				flush()
			} else {
				line += " "
				lineLen++
			}
		}
		line += word
		lineLen += n
		empty = false
	}
	if !empty || len(lines) == 0 {
		lines = append(lines, strings.TrimRight(line, " "))
	}
	return lines
}

// Line wraps one line of laid-out text (a message, a help line) that may
// be wider than width: the lines after the first are indented as far as
// its text after a gap of two or more spaces starts (a list of flags or
// commands, "  -v, --verbose   what it does"), else by its own indent plus
// hang.
func Line(line string, width, hang int) []string {
	if utf8.RuneCountInString(line) <= width {
		return []string{line}
	}
	lead := len(line) - len(strings.TrimLeft(line, " "))
	if at, col := gapAt(line, lead); at > 0 && col <= width/2 {
		// A list's term stays as it is laid out; its text wraps beneath
		// its own start.
		return Wrap(line[at:], width, Options{First: line[:at], Indent: strings.Repeat(" ", col)})
	}
	return Wrap(line[lead:], width, Options{First: line[:lead], Indent: strings.Repeat(" ", lead+hang)})
}

// gapAt is where text resumes after the first gap of two or more spaces
// past the line's indent, as a byte offset and a column; 0, 0 where there
// is none.
func gapAt(line string, lead int) (at, col int) {
	i := strings.Index(line[lead:], "  ")
	if i < 0 {
		return 0, 0
	}
	j := lead + i
	for j < len(line) && line[j] == ' ' {
		j++
	}
	if j == len(line) {
		return 0, 0
	}
	return j, utf8.RuneCountInString(line[:j])
}

// Writer wraps every line written through it at Width (see Line) and
// writes it to W. A line is held until its newline or Flush.
type Writer struct {
	W     io.Writer
	Width int
	// Hang is how much further than its first line a wrapped line's
	// continuation is indented.
	Hang int
	buf  []byte
}

// Write wraps the complete lines of p and holds the rest.
func (w *Writer) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		if err := w.emit(string(w.buf[:i]), true); err != nil {
			return 0, err
		}
		w.buf = w.buf[i+1:]
	}
}

// Flush writes a last line without its newline.
func (w *Writer) Flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	err := w.emit(string(w.buf), false)
	w.buf = nil
	return err
}

// Unwrap returns the writer below.
func (w *Writer) Unwrap() io.Writer { return w.W }

func (w *Writer) emit(line string, newline bool) error {
	out := CapWords(line)
	if w.Width > 0 {
		out = strings.Join(Line(out, w.Width, w.Hang), "\n")
	}
	if newline {
		out += "\n"
	}
	_, err := io.WriteString(w.W, out)
	return err
}

// Reflow lays out a document of paragraphs and lists (a command's help) at
// width: a paragraph, lines that start at the margin, is filled anew from
// its words; a line that is indented (a list, an example) keeps its own
// layout and is wrapped as Line does when it is wider than width.
func Reflow(text string, width int) string {
	var out, para []string
	end := func() {
		if len(para) > 0 {
			out = append(out, Wrap(strings.Join(para, " "), width, Options{})...)
			para = nil
		}
	}
	for _, l := range strings.Split(text, "\n") {
		if l != "" && l[0] != ' ' {
			para = append(para, l)
			continue
		}
		end()
		out = append(out, Line(l, width, 0)...)
	}
	end()
	return strings.Join(out, "\n")
}

// A word of more than MaxWord characters (a name a program made up, a
// megabyte of NVTX text) is shown by CapWords as its first KeptOfLong
// characters, "…" and its length, so that one name cannot flood a
// terminal each time it is named.
const (
	MaxWord    = 200
	KeptOfLong = 48
)

// CapWords returns s with every word (a run of characters without a space
// or a line end) longer than MaxWord characters cut to its first
// KeptOfLong, followed by "…(N chars)"; s itself where none is.
func CapWords(s string) string {
	if len(s) <= MaxWord {
		return s
	}
	var b strings.Builder
	at := 0 // s[:at] is in b
	for i := 0; i < len(s); {
		if s[i] == ' ' || s[i] == '\n' || s[i] == '\t' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] != ' ' && s[j] != '\n' && s[j] != '\t' {
			j++
		}
		if j-i > MaxWord {
			if n := utf8.RuneCountInString(s[i:j]); n > MaxWord {
				cut := i
				for k := 0; k < KeptOfLong; k++ {
					_, size := utf8.DecodeRuneInString(s[cut:])
					cut += size
				}
				b.WriteString(s[at:cut])
				fmt.Fprintf(&b, "…(%d chars)", n)
				at = j
			}
		}
		i = j
	}
	if at == 0 {
		return s
	}
	b.WriteString(s[at:])
	return b.String()
}

// CapWriter passes what is written through it to W with CapWords applied
// line by line; a line is held until its newline or Flush.
type CapWriter struct {
	W   io.Writer
	buf []byte
}

// Write caps the complete lines of p and holds the rest.
func (w *CapWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	i := bytes.LastIndexByte(w.buf, '\n')
	if i < 0 {
		return len(p), nil
	}
	if _, err := io.WriteString(w.W, CapWords(string(w.buf[:i+1]))); err != nil {
		return 0, err
	}
	w.buf = append(w.buf[:0], w.buf[i+1:]...)
	return len(p), nil
}

// Flush writes a last line without its newline.
func (w *CapWriter) Flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	_, err := io.WriteString(w.W, CapWords(string(w.buf)))
	w.buf = nil
	return err
}
