package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/internal/golden"
)

func auditOfCapture(t *testing.T, path string) *audit.Audit {
	t.Helper()
	a := audit.NewAccumulator()
	scan, err := capture.StreamCopies(path, capture.Options{}, a.Handler)
	if err != nil {
		t.Fatal(err)
	}
	return a.Finish(scan, nil)
}

func TestAuditReport(t *testing.T) {
	dir := filepath.Join("..", "testdata", "captures")
	before := auditOfCapture(t, filepath.Join(dir, "train-pageable", "train-pageable.sqlite"))
	after := auditOfCapture(t, filepath.Join(dir, "train-pinned", "train-pinned.sqlite"))
	rep, err := BuildAudit(before, after, audit.Compare(before, after))
	if err != nil {
		t.Fatal(err)
	}
	files, err := rep.Files()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{AuditMarkdownFile, AuditHTMLFile, "hosttime.png", "hosttime.svg"} {
		if len(files[n]) == 0 {
			t.Errorf("no %s", n)
		}
	}
	img, err := png.Decode(bytes.NewReader(files["hosttime.png"]))
	if err != nil || img.Bounds().Dx() < 500 {
		t.Errorf("hosttime.png: %v", err)
	}
	md := string(files[AuditMarkdownFile])
	for _, want := range []string{"# Check: held", "![Host time held by copy calls, before and after](hosttime.png)", "| host time in host-to-device copy calls | 50.0 ms | 2.2 ms |"} {
		if !strings.Contains(md, want) {
			t.Errorf("audit.md lacks %q", want)
		}
	}
	if !strings.Contains(string(files[AuditHTMLFile]), "data:image/png;base64,") {
		t.Error("audit.html has no inline plot")
	}
	// One capture: its totals; no copies: no plot, and why.
	one, err := BuildAudit(before, nil, nil)
	if err != nil || one.Plot.PNG == nil {
		t.Errorf("one capture: %v", err)
	}
	empty, err := BuildAudit(audit.NewAccumulator().Finish(&capture.CopyScan{}, nil), nil, nil)
	if err != nil || empty.Plot.PNG != nil || empty.Plot.Skipped == "" {
		t.Errorf("empty audit plot = %+v, %v", empty.Plot, err)
	}
}

// TestWriteAudit renders the PyTorch captures' audit and check in every
// format and looks for their numbers: the text and Markdown must show what
// the audit computed, and the JSON, in the versioned envelope, must read
// back to the same audits and check.
func TestWriteAudit(t *testing.T) {
	out := trainAudits(t)
	before, after := out.Before, out.After
	hostBefore := audit.FormatNs(float64(out.Check.HtoDBeforeNs))
	var text, md, js bytes.Buffer
	opts := WriteOptions{Version: "test"}
	if err := WriteAudit(&text, FormatText, out, opts); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"audit of " + before.Capture, "audit of " + after.Capture,
		"Check: " + before.Capture, strings.ToUpper(string(out.Check.Verdict)), hostBefore, "Findings", "secretly-synchronous"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q", want)
		}
	}
	if err := WriteAudit(&md, FormatMarkdown, out, opts); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| class |", "# Check: " + string(out.Check.Verdict),
		"| host time in host-to-device copy calls | " + hostBefore + " | " + audit.FormatNs(float64(out.Check.HtoDAfterNs)) + " |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if err := WriteAudit(&js, FormatJSON, out, opts); err != nil {
		t.Fatal(err)
	}
	var env struct {
		SchemaVersion int      `json:"schemaVersion"`
		Kind          string   `json:"kind"`
		Tool          Tool     `json:"tool"`
		Inputs        []string `json:"inputs"`
	}
	if err := json.Unmarshal(js.Bytes(), &env); err != nil {
		t.Fatal(err)
	}
	if env.SchemaVersion != SchemaVersion || env.Kind != KindAudit || env.Tool.Version != "test" ||
		strings.Join(env.Inputs, ",") != before.Capture+","+after.Capture {
		t.Errorf("envelope = %+v", env)
	}
	if strings.Contains(js.String(), `\u003c`) || !strings.Contains(js.String(), `"sizeBucket": "<4KiB"`) {
		t.Error("JSON is HTML-escaped")
	}
	p := filepath.Join(t.TempDir(), "audit.json")
	if err := os.WriteFile(p, js.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	back, ok, err := audit.ReadOutput(p)
	if !ok || err != nil {
		t.Fatalf("ReadOutput of WriteAudit's JSON: %v %v", ok, err)
	}
	if back.Check == nil || back.Check.HtoDBeforeNs != out.Check.HtoDBeforeNs || back.Check.Verdict != out.Check.Verdict ||
		back.Before.Copies != before.Copies || back.After == nil || back.After.Capture != after.Capture {
		t.Errorf("JSON read back = %+v", back.Check)
	}
	if err := WriteAudit(&js, "yaml", out, opts); err == nil {
		t.Error("WriteAudit accepted an unknown format")
	}
}

// TestAuditEnvelopeVersion: the version audit.ReadOutput reads is the one
// the envelope is written in.
func TestAuditEnvelopeVersion(t *testing.T) {
	if audit.EnvelopeVersion != SchemaVersion || audit.EnvelopeKind != KindAudit {
		t.Errorf("audit reads version %d kind %q; report writes %d %q", audit.EnvelopeVersion, audit.EnvelopeKind, SchemaVersion, KindAudit)
	}
}

// trainAudits audits the PyTorch training captures before and after the
// fix, as audit does with NVIDIA's rule left out.
func trainAudits(t *testing.T) *audit.Output {
	t.Helper()
	dir := filepath.Join("..", "testdata", "captures")
	before := auditOfCapture(t, filepath.Join(dir, "train-pageable", "train-pageable.sqlite"))
	after := auditOfCapture(t, filepath.Join(dir, "train-pinned", "train-pinned.sqlite"))
	return &audit.Output{Before: before, After: after, Check: audit.Compare(before, after)}
}

// TestAuditTextWidth renders the training captures' audit at 80 and 100
// columns and alone, against goldens, and checks that every line fits
// (but a path, which is never broken), that the class table splits rather
// than overflows, and that -v shows every evidence copy that is otherwise
// counted and named.
func TestAuditTextWidth(t *testing.T) {
	out := trainAudits(t)
	alone := &audit.Output{Before: out.Before}
	for _, c := range []struct {
		name    string
		out     *audit.Output
		width   int
		verbose bool
		golden  bool // the face of the audit's text
	}{
		{"train-audit.80", out, 80, false, false}, {"train-audit.100", out, 100, false, true},
		{"train-pageable-audit.80", alone, 80, false, true}, {"train-pageable-audit.verbose.100", alone, 100, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteAudit(&b, FormatText, c.out, WriteOptions{Text: TextOptions{Width: c.width, Verbose: c.verbose}}); err != nil {
				t.Fatal(err)
			}
			for i, l := range strings.Split(b.String(), "\n") {
				if n := utf8.RuneCountInString(l); n > c.width && !strings.HasPrefix(l, "audit of ") {
					t.Errorf("line %d is %d wide (> %d): %q", i+1, n, c.width, l)
				}
			}
			for _, au := range []*audit.Audit{c.out.Before, c.out.After} {
				if au == nil {
					continue
				}
				for _, cl := range au.Classes {
					if !strings.Contains(b.String(), cl.Label()+"\n") {
						t.Errorf("class %q not on a line of its own", cl.Label())
					}
				}
				f := au.Finding(audit.FindingSecretlySync)
				shown := strings.Count(b.String(), "correlation id ")
				hidden := strings.Contains(b.String(), fmt.Sprintf("... %d more not shown: -v shows them", len(f.Evidence)-3))
				if c.verbose != !hidden || (c.verbose && shown < len(f.Evidence)) {
					t.Errorf("verbose %v: %d evidence lines shown, the rest named: %v", c.verbose, shown, hidden)
				}
			}
			if c.golden {
				golden.Assert(t, filepath.Join("testdata", c.name+".golden.txt"), b.Bytes())
			}
		})
	}
}
