package check

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/internal/fixture"
	"github.com/nsyscheck/nsyscheck/nsysrule"
)

// TestRuleBesideTheStream: with nsys installed (the stand-in of
// testdata/programs, which writes the real rule's output of the shipped
// captures byte for byte) the rule runs beside the audit's stream and its
// answer is the one read from its CSV beside the capture; where the two
// sides disagree (the driver API's copies, which the rule passes over),
// the copies read a second time name the audit's earliest.
func TestRuleBesideTheStream(t *testing.T) {
	if _, err := exec.LookPath("sqlite3"); err != nil {
		t.Skip("the stand-in nsys needs the sqlite3 shell")
	}
	standIn, err := filepath.Abs(filepath.Join("..", "testdata", "programs", "nsys-rule-standin.sh"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("..", "testdata", "captures")
	for _, c := range []struct {
		capture string
		agree   bool
		only    int
	}{{"many-copies-small", true, 0}, {"train-pageable", true, 0}, {"driver-pageable", false, 10}} {
		path := filepath.Join(dir, c.capture, c.capture+".sqlite")
		ran, err := AuditCapture(context.Background(), path, nil, AuditOptions{Nsys: standIn})
		if err != nil {
			t.Fatal(err)
		}
		read, err := AuditCapture(context.Background(), path, nil, AuditOptions{Nsys: filepath.Join(t.TempDir(), "no-nsys")})
		if err != nil {
			t.Fatal(err)
		}
		r, b := ran.NVIDIA, read.NVIDIA
		if r == nil || b == nil || !r.Available || !b.Available {
			t.Fatalf("%s: the rule ran %+v, read %+v", c.capture, r, b)
		}
		if r.Source.Kind != audit.RuleSourceAnalyze || r.Source.Path == "" || b.Source.Kind != audit.RuleSourceCSV ||
			!strings.HasSuffix(b.Source.Path, "_"+nsysrule.Name+".csv") {
			t.Errorf("%s: sources %+v and %+v", c.capture, r.Source, b.Source)
		}
		if r.Agree != c.agree || r.RuleCount != b.RuleCount || r.AuditCount != b.AuditCount || r.Both != b.Both ||
			len(r.OnlyAudit) != c.only || len(b.OnlyAudit) != c.only || len(r.OnlyRule) != len(b.OnlyRule) {
			t.Errorf("%s: the rule ran %+v, read %+v", c.capture, r, b)
		}
		for i := 1; i < len(r.OnlyAudit); i++ {
			if r.OnlyAudit[i].GPUStart < r.OnlyAudit[i-1].GPUStart {
				t.Errorf("%s: the audit's copies are not in start order: %+v", c.capture, r.OnlyAudit)
			}
		}
	}
}

// TestVerifyReadsTheRuleCSVOfItsCapture: verify reads NVIDIA's rule's CSV
// by the name nsys analyze gives it beside the capture (NAME.sqlite,
// NAME_cuda_memcpy_async.csv), the one the audit reads and the exposure
// scan scans; another capture's CSV in the same folder is not set beside
// this capture's verdicts.
func TestVerifyReadsTheRuleCSVOfItsCapture(t *testing.T) {
	from := filepath.Join("..", "testdata", "captures", "h200-pinned")
	ruleOf := func(k *Checked) *diag.NsysRule {
		for _, d := range k.Result.Diagnostics {
			if r, ok := d.Detail.(diag.NsysRule); ok {
				return &r
			}
		}
		return nil
	}
	for _, c := range []struct {
		csv  string
		read bool
	}{{"pinned_" + nsysrule.Name + ".csv", true}, {"other_" + nsysrule.Name + ".csv", false}} {
		dir := t.TempDir()
		fixture.Copy(t, filepath.Join(from, "pinned.sqlite"), filepath.Join(dir, "pinned.sqlite"))
		fixture.Copy(t, filepath.Join(from, "pinned_"+nsysrule.Name+".csv"), filepath.Join(dir, c.csv))
		ks, err := Paths([]string{filepath.Join(dir, "pinned.sqlite")}, Options{Nsys: filepath.Join(dir, "no-nsys")})
		if err != nil {
			t.Fatal(err)
		}
		r := ruleOf(ks[0])
		if (r != nil) != c.read {
			t.Fatalf("beside %s: the rule's reading %+v, want read=%v", c.csv, r, c.read)
		}
		if r != nil && (r.File != c.csv || r.Flagged == 0 || !r.Agrees) {
			t.Errorf("beside %s: %+v", c.csv, *r)
		}
	}
}
