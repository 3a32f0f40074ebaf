package report

import (
	"bytes"
	"encoding/json"
	"image/png"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/capture"
)

func auditOfCapture(t *testing.T, path string) *audit.Audit {
	t.Helper()
	a := audit.NewAccumulator()
	scan, err := capture.StreamCopies(path, capture.Options{}, a.Add)
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
// the audit computed, and the JSON must read back to the same check.
func TestWriteAudit(t *testing.T) {
	dir := filepath.Join("..", "testdata", "captures")
	before := auditOfCapture(t, filepath.Join(dir, "train-pageable", "train-pageable.sqlite"))
	after := auditOfCapture(t, filepath.Join(dir, "train-pinned", "train-pinned.sqlite"))
	out := &audit.Output{SchemaVersion: audit.SchemaVersion, Before: before, After: after, Check: audit.Compare(before, after)}
	hostBefore := audit.FormatNs(float64(out.Check.HtoDBeforeNs))
	var text, md, js bytes.Buffer
	if err := WriteAudit(&text, FormatText, out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"audit of " + before.Capture, "audit of " + after.Capture,
		"Check: " + before.Capture, strings.ToUpper(string(out.Check.Verdict)), hostBefore, "Findings", "secretly-synchronous"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q", want)
		}
	}
	if err := WriteAudit(&md, FormatMarkdown, out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| class |", "# Check: " + string(out.Check.Verdict),
		"| host time in host-to-device copy calls | " + hostBefore + " | " + audit.FormatNs(float64(out.Check.HtoDAfterNs)) + " |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if err := WriteAudit(&js, FormatJSON, out); err != nil {
		t.Fatal(err)
	}
	var back audit.Output
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Check == nil || back.Check.HtoDBeforeNs != out.Check.HtoDBeforeNs || back.Check.Verdict != out.Check.Verdict ||
		back.Before.Copies != before.Copies {
		t.Errorf("JSON read back = %+v", back.Check)
	}
	if err := WriteAudit(&js, "yaml", out); err == nil {
		t.Error("WriteAudit accepted an unknown format")
	}
}
