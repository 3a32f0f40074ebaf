package textwrap

import (
	"bytes"
	"strings"
	"testing"
)

func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		text  string
		width int
		want  []string
	}{
		{"a b c", 10, []string{"> a b c"}},
		{"aaaa bbbb cccc", 9, []string{"> aaaa", "  bbbb", "  cccc"}},
		// A word longer than a line is never broken: it stands whole on a
		// line of its own, a path as much as any word.
		{"abcdefghijkl", 6, []string{"> abcdefghijkl"}},
		{"x abcdefghijkl y", 6, []string{"> x", "  abcdefghijkl", "  y"}},
		{"in the reference testdata/captures/train-pageable/train-pageable.sqlite, so no check", 40,
			[]string{"> in the reference", "  testdata/captures/train-pageable/train-pageable.sqlite,", "  so no check"}},
		{"", 10, []string{">"}},
		// A number keeps its unit, punctuation after the unit or not.
		{"completion 7.6284 ms, share", 17, []string{"> completion", "  7.6284 ms,", "  share"}},
		{"at 64 MiB here", 9, []string{"> at", "  64 MiB", "  here"}},
		{"ratio 6.12 x of it", 12, []string{"> ratio", "  6.12 x of", "  it"}},
		{"share 99.8 % and", 12, []string{"> share", "  99.8 % and"}},
		// A comparison keeps its bound.
		{"0.97, needs >= 1.3 x", 12, []string{"> 0.97,", "  needs", "  >= 1.3 x"}},
		{"(-0.2, needs >= 0.6)", 12, []string{"> (-0.2,", "  needs", "  >= 0.6)"}},
		// A count keeps what it counts; a number ending its phrase does not.
		{"written (8 files)", 12, []string{"> written", "  (8 files)"}},
		{"ratio 6.7, share", 10, []string{"> ratio", "  6.7,", "  share"}},
		// A word that is no number leaves the next word free.
		{"thread 22/22 ms", 14, []string{"> thread 22/22", "  ms"}},
	} {
		got := Wrap(tc.text, tc.width, Options{First: "> ", Indent: "  "})
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("Wrap(%q, %d) = %q, want %q", tc.text, tc.width, got, tc.want)
		}
	}
}

func TestLine(t *testing.T) {
	for _, tc := range []struct {
		line  string
		width int
		want  []string
	}{
		// Short enough: as it is, gaps and all.
		{"  -v, --verbose   more", 40, []string{"  -v, --verbose   more"}},
		// A list line: its text wraps beneath its own start.
		{"  -v, --verbose   show every line of every source there is", 40,
			[]string{"  -v, --verbose   show every line of", "                  every source there is"}},
		// A message: the continuation indented by hang.
		{"nsyscheck: the file x.sqlite cannot be read", 24,
			[]string{"nsyscheck: the file", "    x.sqlite cannot be", "    read"}},
		// An indented message keeps its indent.
		{"  claim 1.floor: expected held, got died", 24,
			[]string{"  claim 1.floor:", "      expected held, got", "      died"}},
	} {
		got := Line(tc.line, tc.width, 4)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("Line(%q, %d) = %q, want %q", tc.line, tc.width, got, tc.want)
		}
	}
}

func TestWriter(t *testing.T) {
	var b bytes.Buffer
	w := &Writer{W: &b, Width: 20, Hang: 2}
	for _, p := range []string{"one two three ", "four five\nsix", " seven eight nine ten"} {
		if _, err := w.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	if got := b.String(); got != "one two three four\n  five\n" {
		t.Errorf("before Flush: %q", got)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != "one two three four\n  five\nsix seven eight nine\n  ten" {
		t.Errorf("after Flush: %q", got)
	}
	if w.Unwrap() != &b {
		t.Error("Unwrap does not give the writer below")
	}
}

func TestReflow(t *testing.T) {
	doc := "verify reads each\nCAPTURE and judges it.\n\nFlags:\n  -v, --verbose   show every line of every source there is\n      --format    text or json\nUsage:\n  nsyscheck verify"
	want := "verify reads each CAPTURE and judges\nit.\n\nFlags:\n  -v, --verbose   show every line of\n                  every source there\n                  is\n      --format    text or json\nUsage:\n  nsyscheck verify"
	if got := Reflow(doc, 36); got != want {
		t.Errorf("Reflow at 36:\n%s\nwant\n%s", got, want)
	}
}

func TestGlue(t *testing.T) {
	if got := Glue("0.97, needs >= 1.3 x and 64  MiB"); got != "0.97, needs >=\u00a01.3\u00a0x and 64\u00a0MiB" {
		t.Errorf("Glue: %q", got)
	}
}

// TestCapWords: a word longer than MaxWord characters is cut to its first
// KeptOfLong and its length; shorter words, and the text around, stay.
func TestCapWords(t *testing.T) {
	long := "step" + strings.Repeat("é", 300)
	got := CapWords("in range " + long + " now\n  " + long)
	want := "in range step" + strings.Repeat("é", KeptOfLong-4) + "…(304 chars) now\n  step" + strings.Repeat("é", KeptOfLong-4) + "…(304 chars)"
	if got != want {
		t.Errorf("CapWords = %q, want %q", got, want)
	}
	edge := strings.Repeat("x", MaxWord)
	if CapWords(edge+" "+edge) != edge+" "+edge {
		t.Error("a word of MaxWord characters was cut")
	}
	var b strings.Builder
	w := &CapWriter{W: &b}
	for _, part := range []string{"a " + long[:100], long[100:] + "\nb", " c"} {
		if _, err := w.Write([]byte(part)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if b.String() != CapWords("a "+long+"\nb c") {
		t.Errorf("CapWriter wrote %q", b.String())
	}
}

// The control characters a table's cell escapes are escaped in wrapped
// text too, each where it stands: a CR, newline or NEL in a word once
// parted it, as a space.
func TestWrapEscapesControls(t *testing.T) {
	got := strings.Join(Wrap("range pa\rss\x1b[2J\ay\nz\u0085w: 40 copies", 80, Options{}), "\n")
	if want := `range pa\x0dss\x1b[2J\x07y\x0az\u0085w: 40 copies`; got != want {
		t.Errorf("Wrap = %q, want %q", got, want)
	}
}
