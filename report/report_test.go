package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/capture"
	fixtures "github.com/nsyscheck/nsyscheck/internal/fixture"
	"github.com/nsyscheck/nsyscheck/internal/golden"
	"github.com/nsyscheck/nsyscheck/predictions"
)

// inputs are the shipped inputs every report test runs on.
var inputs = []struct {
	name string
	path string
	link Link
	// plots that must be drawn, and those that must be skipped.
	drawn, skipped []string
}{
	{"h200-pinned", "../testdata/captures/h200-pinned", Link{}, []string{"bandwidth", "async", "kernels", "calls"}, nil},
	// The PCIe line is drawn from a known link (Gen5 x16, as nvidia-smi
	// would report it in run.json).
	{"h200-pinned-nonvtx", "../testdata/captures/h200-pinned-nonvtx", Link{RatedGBps: 63.015, Gen: 5, Width: 16}, []string{"bandwidth", "async", "kernels", "calls"}, nil},
	{"lesson-t4", "../testdata/measurements/lesson-t4.json", Link{}, []string{"bandwidth", "async", "kernels"}, []string{"calls"}},
}

func evaluate(t *testing.T, path string) *predictions.Result {
	t.Helper()
	c, err := capture.Load(path, capture.Options{APINames: predictions.Names()})
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	return predictions.Evaluate(c)
}

// built holds the reports builtReport drew, by input and link: drawing
// dominates a report's cost, and the tests only read what it drew.
var built fixtures.Shared[builtKey, *Report]

type builtKey struct {
	path string
	link Link
}

// builtReport is Build's report of the input at path with the link given,
// drawn on first use and shared by the tests after: none of them changes a
// report or its result.
func builtReport(t *testing.T, path string, link Link) *Report {
	t.Helper()
	return built.Get(builtKey{path, link}, func() *Report {
		rep, err := Build(evaluate(t, path), Options{Link: link})
		if err != nil {
			t.Fatalf("build the report of %s: %v", path, err)
		}
		return rep
	})
}

// The face of the Markdown of an input with the program's numbers alone:
// tables the input cannot fill and plots not drawn, each saying why.
// docs/example-report is the face of a full capture's.
func TestGoldenMarkdown(t *testing.T) {
	rep := builtReport(t, "../testdata/measurements/lesson-t4.json", Link{})
	golden.Assert(t, filepath.Join("testdata", "lesson-t4.golden.md"), rep.Markdown())
}

func TestPlotsDecode(t *testing.T) {
	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			rep := builtReport(t, in.path, in.link)
			dir := t.TempDir()
			paths, err := rep.WriteDir(dir, false)
			if err != nil {
				t.Fatal(err)
			}
			written := map[string]bool{}
			for _, p := range paths {
				written[filepath.Base(p)] = true
			}
			for _, name := range in.drawn {
				checkPNG(t, filepath.Join(dir, name+".png"))
				checkSVG(t, filepath.Join(dir, name+".svg"))
			}
			for _, name := range in.skipped {
				if written[name+".png"] || written[name+".svg"] {
					t.Errorf("%s was drawn; want it skipped", name)
				}
				found := false
				for _, p := range rep.Plots {
					if p.Name == name && p.Skipped != "" {
						found = true
					}
				}
				if !found {
					t.Errorf("plot %s has no reason for being skipped", name)
				}
			}
			md, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range in.drawn {
				if !bytes.Contains(md, []byte("]("+name+".png)")) {
					t.Errorf("report.md does not link %s.png", name)
				}
			}
		})
	}
}

func checkPNG(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 10_000 {
		t.Errorf("%s: %d bytes, too small for a drawn plot", path, len(data))
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if cfg.Width < 800 || cfg.Height < 500 {
		t.Errorf("%s: %dx%d pixels, want at least 800x500", path, cfg.Width, cfg.Height)
	}
	if _, err := png.Decode(bytes.NewReader(data)); err != nil {
		t.Errorf("%s: %v", path, err)
	}
}

func checkSVG(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 2_000 {
		t.Errorf("%s: %d bytes, too small for a drawn plot", path, len(data))
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	root := ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: not XML: %v", path, err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		t.Errorf("%s: root element %q, want svg", path, root)
	}
}

// remote matches anything a browser would fetch from a network.
var remote = regexp.MustCompile(`(?i)(src|href|action|poster|srcset)\s*=\s*["']?\s*(https?:)?//|url\(\s*["']?\s*(https?:)?//|@import`)

func TestHTMLSelfContained(t *testing.T) {
	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			rep := builtReport(t, in.path, in.link)
			html, err := rep.HTML()
			if err != nil {
				t.Fatal(err)
			}
			s := string(html)
			if m := remote.FindString(s); m != "" {
				t.Errorf("HTML fetches a resource: %q", m)
			}
			if strings.Contains(s, "http://") || strings.Contains(s, "https://") {
				t.Errorf("HTML mentions an http(s) address")
			}
			if n := strings.Count(s, `src="data:image/png;base64,`); n != len(in.drawn) {
				t.Errorf("%d inline images, want %d", n, len(in.drawn))
			}
			for _, want := range []string{"<style>", "What the run said", "Exercise", "Diagnostics"} {
				if !strings.Contains(s, want) {
					t.Errorf("HTML lacks %q", want)
				}
			}
			for _, p := range rep.Plots {
				if p.Skipped != "" && !strings.Contains(s, "Not drawn: ") {
					t.Errorf("HTML does not say why %s was not drawn", p.Name)
				}
			}
		})
	}
}

func TestWriteDirRefusesToOverwrite(t *testing.T) {
	rep := builtReport(t, "../testdata/measurements/lesson-t4.json", Link{})
	dir := t.TempDir()
	keep := []byte("someone's notes\n")
	if err := os.WriteFile(filepath.Join(dir, MarkdownFile), keep, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := rep.WriteDir(dir, false)
	var ee *ExistsError
	if !errors.As(err, &ee) || len(ee.Names) != 1 || ee.Names[0] != MarkdownFile {
		t.Fatalf("WriteDir over an existing report.md: err = %v, want an ExistsError naming it", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, MarkdownFile)); !bytes.Equal(got, keep) {
		t.Errorf("report.md was changed")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("WriteDir wrote %d files beside the refusal", len(entries)-1)
	}
	if _, err := rep.WriteDir(dir, true); err != nil {
		t.Fatalf("WriteDir with overwrite: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, MarkdownFile)); bytes.Equal(got, keep) {
		t.Errorf("report.md was not replaced with overwrite set")
	}
}

// TestMissingData checks a capture without part 1 rows: the bandwidth plot
// is skipped and both reports say why.
func TestMissingData(t *testing.T) {
	r := evaluate(t, "../testdata/measurements/lesson-t4.json")
	predictions.CopyRows.Set(r, nil)
	predictions.CallRows.Set(r, nil)
	rep, err := Build(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	md := string(rep.Markdown())
	for _, want := range []string{"The input has no H2D copy rows.", "Not drawn: the input has no part 1 copy rows", "Not drawn: the input gives no per-call durations"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	html, err := rep.HTML()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "Not drawn: the input has no part 1 copy rows") {
		t.Errorf("HTML does not say why the bandwidth plot is missing")
	}
}

func TestMarkdownWithoutPlots(t *testing.T) {
	var b bytes.Buffer
	rs := []*predictions.Result{evaluate(t, "../testdata/measurements/lesson-t4.json"), evaluate(t, "../testdata/captures/h200-pinned")}
	if err := Markdown(&b, rs); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if strings.Count(s, "\n# ") != 1 || !strings.HasPrefix(s, "# ") {
		t.Errorf("want two reports, each with its heading")
	}
	if strings.Contains(s, ".png)") {
		t.Errorf("Markdown for printing links images that were never written")
	}
}

func TestMarkdownEscape(t *testing.T) {
	for in, want := range map[string]string{
		"CUPTI_ACTIVITY_KIND_RUNTIME": "CUPTI_ACTIVITY_KIND_RUNTIME",
		"_x_ a|b <i> *y*":             `\_x\_ a\|b \<i> \*y\*`,
		"# not a heading":             `\# not a heading`,
		"NVIDIA H200\n# all held":     `NVIDIA H200 # all held`,
		"a\r\n- item":                 `a  - item`,
	} {
		if got := md(in); got != want {
			t.Errorf("md(%q) = %q, want %q", in, got, want)
		}
	}
	if got, want := mdText("pass\n# Check: held | x"), `pass # Check: held \| x`; got != want {
		t.Errorf("mdText: %q, want %q", got, want)
	}
}
