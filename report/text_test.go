package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/internal/golden"
	"github.com/nsyscheck/nsyscheck/predictions"
)

const refDir = "../testdata/reference/h200-ref"

// The text table of the reference capture, read as each input kind.
func TestGoldenText(t *testing.T) {
	opts := capture.Options{APINames: predictions.Names()}
	load := map[string]func() (*capture.Capture, error){
		"ref-sqlite": func() (*capture.Capture, error) { return capture.Load(filepath.Join(refDir, "ref.sqlite"), opts) },
		"ref-transcript": func() (*capture.Capture, error) {
			return capture.LoadTranscript(filepath.Join(refDir, "ref.transcript.txt"))
		},
		"ref-csv": func() (*capture.Capture, error) { return capture.LoadCSVDir(refDir, opts) },
		"ref-csv-nsys2022": func() (*capture.Capture, error) {
			return capture.LoadCSVDir("../testdata/reference/h200-ref-nsys2022-csv", opts)
		},
	}
	for _, name := range []string{"ref-sqlite", "ref-transcript", "ref-csv", "ref-csv-nsys2022"} {
		t.Run(name, func(t *testing.T) {
			c, err := load[name]()
			if err != nil {
				t.Fatal(err)
			}
			var txt bytes.Buffer
			if err := Text(&txt, predictions.Evaluate(c)); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, filepath.Join("testdata", name+".golden.txt"), txt.Bytes())
		})
	}
}

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
	if err := Write(&buf, FormatText, []*predictions.Result{a, b}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"h200-pinned/pinned.sqlite", "reference/h200-ref", "prediction 2", "4.bytes unavailable: ",
		"1.floor       >= 1.3"} {
		if !strings.Contains(out, want) {
			t.Errorf("side-by-side text lacks %q:\n%s", want, out)
		}
	}
	if err := Write(&buf, "yaml", nil); err == nil {
		t.Error("Write accepted an unknown format")
	}
}
