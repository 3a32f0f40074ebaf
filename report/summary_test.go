package report

import (
	"bytes"
	stdhtml "html"
	"regexp"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/predictions"
)

// renderAll is one result in text at 80 columns, Markdown and HTML.
func renderAll(t *testing.T, r *predictions.Result) map[string]string {
	t.Helper()
	var text bytes.Buffer
	if err := Text(&text, r, TextOptions{Width: 80}); err != nil {
		t.Fatal(err)
	}
	rep := &Report{Result: r, Options: Options{NoPlots: true}}
	html, err := rep.HTML()
	if err != nil {
		t.Fatal(err)
	}
	// The page's text as a browser shows it: escapes read back.
	return map[string]string{"text": text.String(), "markdown": string(rep.Markdown()), "html": stdhtml.UnescapeString(string(html))}
}

// lineOf is the number of the first line of out holding s, 0 where none.
func lineOf(out, s string) int {
	for i, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			return i + 1
		}
	}
	return 0
}

// The answer leads every format: each prediction's verdict within the
// first lines, before any claim's evidence, a died claim read as a
// failure, and what broke the lesson's premise right beneath the verdicts
// with its advice said once.
func TestAnswerFirst(t *testing.T) {
	r := evaluate(t, "../testdata/captures/broken-pin/broken-pin.sqlite")
	for format, out := range renderAll(t, r) {
		first := lineOf(out, "prediction 1")
		cause := lineOf(out, "pinned-source-pageable")
		evidence := lineOf(out, "pinned is not faster than pageable")
		if first == 0 || cause == 0 || evidence == 0 {
			t.Fatalf("%s: prediction 1 on line %d, the cause on %d, the evidence on %d:\n%s", format, first, cause, evidence, out)
		}
		if format == "text" && first > 4 {
			t.Errorf("text: prediction 1 on line %d, want it among the first four", first)
		}
		if !(first < cause && cause < evidence) {
			t.Errorf("%s: prediction 1 on line %d, the cause on %d, the evidence on %d: want the answer, then the cause, then the evidence", format, first, cause, evidence)
		}
		if n := strings.Count(out, "cudaMallocHost"); n != 1 {
			t.Errorf("%s: the advice is given %d times, want once:\n%s", format, n, out)
		}
		flat := squash(out)
		if !strings.Contains(flat, "1.floor died (0.9707, needs >= 1.3)") {
			t.Errorf("%s: 1.floor does not read as a failure", format)
		}
		// A died claim's value beside its bound as a true-looking
		// inequality: "died 0.9707 >= 1.3", "measured 0.9707 >= 1.3".
		for _, re := range []string{`died\W+0\.9707 >= 1\.3`, `measured 0\.9707 >=`, `0\.9982 < 0\.1`} {
			if m := regexp.MustCompile(re).FindString(out); m != "" {
				t.Errorf("%s: %q reads as a claim that held", format, m)
			}
		}
	}
}

// An application's capture says that it is not the lesson's program and
// names the audit command, in every format; its text leaves out the
// unavailable claims' reasons, which -v shows.
func TestNotTheLessonSaid(t *testing.T) {
	r := evaluate(t, "../testdata/captures/train-pinned/train-pinned.sqlite")
	command := "nsyscheck audit " + r.Input.Path
	for format, out := range renderAll(t, r) {
		line := lineOf(strings.ToLower(out), "not the lesson")
		if line == 0 || format != "html" && line > 5 || line > lineOf(out, "prediction 1") && lineOf(out, "prediction 1") > 0 {
			t.Errorf("%s: the not-the-lesson line is on line %d, prediction 1 on %d:\n%s", format, line, lineOf(out, "prediction 1"), out)
		}
		if !strings.Contains(out, command) {
			t.Errorf("%s: no %q", format, command)
		}
	}
	text := renderAll(t, r)["text"]
	if strings.Contains(text, "why unavailable") || !strings.Contains(text, "-v shows why") {
		t.Errorf("text of an application's capture lists the claims' reasons without -v:\n%s", text)
	}
	if lines := strings.Count(text, "\n"); lines > 20 {
		t.Errorf("text of an application's capture is %d lines", lines)
	}
	var verbose bytes.Buffer
	if err := Text(&verbose, r, TextOptions{Width: 80, Verbose: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(verbose.String(), "why unavailable") || !strings.Contains(verbose.String(), "prediction 1  unavailable") {
		t.Errorf("-v of an application's capture lacks the claims:\n%s", verbose.String())
	}
	// The lesson's program is never taken for another.
	h200 := renderAll(t, evaluate(t, "../testdata/captures/h200-pinned/pinned.sqlite"))
	for format, out := range h200 {
		if strings.Contains(strings.ToLower(out), "not the lesson") {
			t.Errorf("%s of h200-pinned says it is not the lesson's program", format)
		}
	}
}

// The check against a reference is worded in every format from its typed
// values: both ratios, how far apart, the slower pinned rows.
func TestReferenceWords(t *testing.T) {
	ref := evaluate(t, "../testdata/captures/h200-pinned/pinned.sqlite")
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"../testdata/captures/torch-lesson/torch-lesson.sqlite",
			[]string{"reference", "held", "6.22x against the reference's 6.12x, 1.7% above (within 20%)"}},
		{"../testdata/captures/broken-pin/broken-pin.sqlite",
			[]string{"reference", "died", "1.00x against the reference's 6.12x, 83.7% below (needs within 20%)",
				"pinned is slower than pageable at 64 MiB: h2d (pinned 10.444 ms, pageable 10.436 ms, trace), so your pinned buffer probably is not pinned"}},
	} {
		r := evaluate(t, tc.path)
		rc := predictions.CheckReference(r, ref)
		r.Reference = &rc
		for format, out := range renderAll(t, r) {
			flat := squash(out)
			for _, w := range tc.want {
				if !strings.Contains(flat, w) {
					t.Errorf("%s %s lacks %q:\n%s", tc.path, format, w, out)
				}
			}
			if !strings.Contains(flat, ref.Input.Path) {
				t.Errorf("%s %s does not name the reference", tc.path, format)
			}
		}
	}
}

// One number, one spelling: a claim's measured value and the evidence line
// that states it give the same digits ("0.002905" beside "0.0029" was two).
func TestOneSpellingPerNumber(t *testing.T) {
	r := evaluate(t, "../testdata/captures/h200-pinned/pinned.sqlite")
	var b bytes.Buffer
	if err := Text(&b, r, TextOptions{Width: 200, Verbose: true}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, tc := range []struct{ value, evidence string }{
		{"2.pinned    held  0.002905 < 0.1", "share 0.002905"},
		{"2.pageable  held  0.997 >= 0.8", "share 0.997 "},
		{"1.growth    held  0.8 >= 0.6", "tau(size, ratio) = 0.8;"},
		{"3.factor    held  39.19 within [36.71, 146.8]", "held when 36.71 <= measured <= 146.8"},
		{"4.calltime  held  2135 >= 5", "ratio 2135x"},
	} {
		if !strings.Contains(out, tc.value) || !strings.Contains(out, tc.evidence) {
			t.Errorf("want %q and %q in:\n%s", tc.value, tc.evidence, out)
		}
	}
	for _, twice := range []string{"share 0.0029 ", "share 0.9970", "= 0.800", "146.84", "2135.0x"} {
		if strings.Contains(out, twice) {
			t.Errorf("%q spells a number the claim spells otherwise", twice)
		}
	}
}
