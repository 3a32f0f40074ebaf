package report

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/internal/golden"
	"github.com/nsyscheck/nsyscheck/predictions"
)

func allResults(t *testing.T) []*predictions.Result {
	var rs []*predictions.Result
	for _, p := range plotInputs {
		rs = append(rs, evaluate(t, p))
	}
	return rs
}

// squash joins a text's words with single spaces.
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestTextFitsWidth checks that no line of the text output, one input or
// several, is wider than the width asked for.
func TestTextFitsWidth(t *testing.T) {
	rs := allResults(t)
	for _, width := range []int{40, 60, 80, 100, 167} {
		for _, verbose := range []bool{false, true} {
			opts := TextOptions{Width: width, Verbose: verbose}
			var outs []string
			for _, r := range rs {
				var b bytes.Buffer
				if err := Text(&b, r, opts); err != nil {
					t.Fatal(err)
				}
				outs = append(outs, b.String())
			}
			var b bytes.Buffer
			if err := TextMulti(&b, rs, opts); err != nil {
				t.Fatal(err)
			}
			outs = append(outs, b.String())
			paths := map[string]bool{}
			for i, r := range rs {
				paths[r.Input.Path] = true
				paths[fmt.Sprintf("[%d] %s", i+1, r.Input.Path)] = true
			}
			for i, out := range outs {
				for n, line := range strings.Split(out, "\n") {
					// A path is never broken, so that it can be copied.
					if paths[line] {
						continue
					}
					if w := utf8.RuneCountInString(line); w > width {
						t.Errorf("width %d verbose %v, output %d line %d is %d wide: %q", width, verbose, i, n+1, w, line)
					}
				}
			}
		}
	}
}

// TestTextNeverCuts checks that the text output holds, word for word, each
// claim's statement and reason and the evidence line that decided it, every
// evidence line with -v, and counts the lines it leaves out without -v.
func TestTextNeverCuts(t *testing.T) {
	for _, r := range allResults(t) {
		for _, verbose := range []bool{false, true} {
			var b bytes.Buffer
			if err := Text(&b, r, TextOptions{Width: 60, Verbose: verbose}); err != nil {
				t.Fatal(err)
			}
			out := squash(b.String())
			shown := 0
			for i := range r.Claims {
				c := &r.Claims[i]
				want := []string{wordsText(c.Statement), sourceWhys(c.Why)}
				deciding, others := decidingEvidence(c)
				switch {
				case c.Verdict == predictions.Unavailable && !verbose:
				case c.Verdict == predictions.Unavailable, verbose:
					want = append(want, evidenceLines(c)...)
					shown += len(c.Evidence)
				case len(deciding) > 0:
					want = append(want, deciding[len(deciding)-1])
					shown++
				}
				_ = others
				for _, s := range want {
					if s != "" && !strings.Contains(out, squash(s)) {
						t.Errorf("%s verbose %v: %s: output lacks %q", r.Input.Path, verbose, c.ID, s)
					}
				}
			}
			total := 0
			for _, c := range r.Claims {
				total += len(c.Evidence)
			}
			note := plural(total-shown, "more evidence line") + " not shown: -v shows every line"
			if hidden := total - shown; hidden > 0 && !strings.Contains(out, note) {
				t.Errorf("%s verbose %v: output does not say %q", r.Input.Path, verbose, note)
			}
			if verbose && strings.Contains(out, "not shown") {
				t.Errorf("%s: -v output still leaves lines out", r.Input.Path)
			}
			if r.Input.Thread != nil && !strings.Contains(out, "the thread with the most cudaMemcpyAsync calls") {
				t.Errorf("%s: the program thread %v is not explained", r.Input.Path, *r.Input.Thread)
			}
		}
	}
}

// TestTextMultiSaysWhy checks that side-by-side output gives a reason line
// for every claim that died or was unavailable, tagged with its input.
func TestTextMultiSaysWhy(t *testing.T) {
	rs := allResults(t)
	var b bytes.Buffer
	if err := TextMulti(&b, rs, TextOptions{Width: 100}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	n := 0
	for i, r := range rs {
		for _, c := range r.Claims {
			if c.Verdict == predictions.Held {
				continue
			}
			n++
			tag := fmt.Sprintf("[%d] %s %s: ", i+1, c.ID, c.Verdict)
			if !strings.Contains(out, tag) {
				t.Errorf("no reason line %q", tag)
			}
		}
	}
	if n == 0 {
		t.Fatal("no claim died or was unavailable among the inputs: the test checks nothing")
	}
}

// The face of the text at 80 columns, verbose, and side by side; the
// pinned outputs of cmd/nsyscheck show it at 100 columns.
func TestTextGolden(t *testing.T) {
	t4 := evaluate(t, "../testdata/measurements/lesson-t4.json")
	h200 := evaluate(t, "../testdata/captures/h200-pinned")
	for name, write := range map[string]func(*bytes.Buffer) error{
		"h200-pinned.80":      func(b *bytes.Buffer) error { return Text(b, h200, TextOptions{Width: 80}) },
		"h200-pinned.verbose": func(b *bytes.Buffer) error { return Text(b, h200, TextOptions{Width: 100, Verbose: true}) },
		"side-by-side.100": func(b *bytes.Buffer) error {
			return TextMulti(b, []*predictions.Result{h200, t4}, TextOptions{Width: 100})
		},
	} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := write(&b); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, filepath.Join("testdata", name+".golden.txt"), b.Bytes())
		})
	}
}

const refDir = "../testdata/reference/h200-ref"

// Several inputs side by side: one column each, the CSV's unavailable
// claims listed with their reasons below.
func TestTextMulti(t *testing.T) {
	a := evaluate(t, "../testdata/captures/h200-pinned/pinned.sqlite")
	c, err := capture.LoadCSVDir(refDir, capture.Options{APINames: predictions.Names()})
	if err != nil {
		t.Fatal(err)
	}
	b := predictions.Evaluate(c)
	var buf bytes.Buffer
	if err := Write(&buf, FormatText, []*predictions.Result{a, b}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"h200-pinned/pinned.sqlite", "reference/h200-ref", "prediction 2", "4.bytes unavailable: ",
		"1.floor       >= 1.3", "held (1 unchecked)", "[2] prediction 4: bytes unchecked: no per-copy records; add cuda_gpu_trace"} {
		if !strings.Contains(out, want) {
			t.Errorf("side-by-side text lacks %q:\n%s", want, out)
		}
	}
	if err := Write(&buf, "yaml", nil, WriteOptions{}); err == nil {
		t.Error("Write accepted an unknown format")
	}
}
