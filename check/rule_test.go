package check

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/internal/fixture"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/nsysrule"
	"github.com/nsyscheck/nsyscheck/source"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// TestRuleBesideTheStream: NVIDIA's rule had three ways gives one answer.
// With --nvidia-rule nsys and nsys installed (the stand-in of
// testdata/programs, which writes the real rule's output of the shipped
// captures byte for byte) the rule runs beside the audit's stream; by
// default it is read from its CSV beside the capture, or, with none there
// (the export alone in a folder), answered from the audit's own records.
// Where the sides disagree (the driver API's copies, which the rule passes
// over), the copies read a second time name the audit's earliest, and the
// same ones whichever way the rule was had.
func TestRuleBesideTheStream(t *testing.T) {
	if _, err := exec.LookPath("sqlite3"); err != nil {
		t.Skip("the stand-in nsys needs the sqlite3 shell")
	}
	standIn, err := filepath.Abs(filepath.Join("..", "testdata", "programs", "nsys-rule-standin.sh"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("..", "testdata", "captures")
	noNsys := filepath.Join(t.TempDir(), "no-nsys")
	for _, c := range []struct {
		capture string
		agree   bool
		only    int
	}{{"many-copies-small", true, 0}, {"train-pageable", true, 0}, {"driver-pageable", false, 10}} {
		path := filepath.Join(dir, c.capture, c.capture+".sqlite")
		alone := filepath.Join(t.TempDir(), c.capture+".sqlite")
		fixture.Copy(t, path, alone)
		var got [3]*audit.RuleComparison
		for i, run := range []struct {
			path string
			opts AuditOptions
		}{{path, AuditOptions{Nsys: standIn, NsysRule: true}}, {path, AuditOptions{Nsys: standIn}}, {alone, AuditOptions{Nsys: noNsys}}} {
			au, err := AuditCapture(context.Background(), run.path, nil, run.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got[i] = au.NVIDIA; got[i] == nil || !got[i].Available {
				t.Fatalf("%s: the rule had the %d. way: %+v", c.capture, i+1, got[i])
			}
		}
		ran, read, scanned := got[0], got[1], got[2]
		if ran.Source.Kind != audit.RuleSourceAnalyze || ran.Source.Path == "" || read.Source.Kind != audit.RuleSourceCSV ||
			!strings.HasSuffix(read.Source.Path, "_"+nsysrule.Name+".csv") || scanned.Source.Kind != audit.RuleSourceScan {
			t.Errorf("%s: sources %+v, %+v and %+v", c.capture, ran.Source, read.Source, scanned.Source)
		}
		if read.Agree != c.agree || len(read.OnlyAudit) != c.only {
			t.Errorf("%s: the rule read %+v", c.capture, read)
		}
		for i, r := range []*audit.RuleComparison{ran, scanned} {
			if r.Agree != read.Agree || r.RuleCount != read.RuleCount || r.AuditCount != read.AuditCount || r.Both != read.Both ||
				!reflect.DeepEqual(r.OnlyRule, read.OnlyRule) || len(r.OnlyAudit) != len(read.OnlyAudit) {
				t.Errorf("%s: the rule %s %+v, read %+v", c.capture, []string{"ran", "scanned"}[i], r, read)
			}
			for k := range r.OnlyAudit {
				if r.OnlyAudit[k].CorrelationID != read.OnlyAudit[k].CorrelationID {
					t.Errorf("%s: the rule %s names the audit's copy %d, read %d", c.capture, []string{"ran", "scanned"}[i],
						r.OnlyAudit[k].CorrelationID, read.OnlyAudit[k].CorrelationID)
				}
			}
		}
		for i := 1; i < len(read.OnlyAudit); i++ {
			if read.OnlyAudit[i].GPUStart < read.OnlyAudit[i-1].GPUStart {
				t.Errorf("%s: the audit's copies are not in start order: %+v", c.capture, read.OnlyAudit)
			}
		}
	}
}

// TestRuleScanIsTheRule: the rule's answer from the records the audit
// streams (its definition, nsysrule.Lists and RowOf, over the copies with
// their calls) is, row for row and in the rule's order, the real rule's
// output shipped beside every capture that has one: the SQLite export's
// records, and the CSV reports' where a capture has them (whose copies
// name their process on their calls alone). A capture with no copy record,
// which the audit refuses, has
// an empty rule output. The memory kinds
// are compared as the records tell them (Device Static as Device), the API
// without its _vNNNN suffix (the rule's second listing of a copy with a
// call stack is read once, as nsysrule reads it).
func TestRuleScanIsTheRule(t *testing.T) {
	csvs, _ := filepath.Glob(filepath.Join("..", "testdata", "captures", "*", "*_"+nsysrule.Name+".csv"))
	kind := func(label string) vocab.MemKind { return nsysdb.MemKindOf(strings.ReplaceAll(label, " ", "_")) }
	compare := func(what string, got, want []nsysrule.FlaggedCopy) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s: the scan lists %d copies, the rule %d", what, len(got), len(want))
			return
		}
		for i, g := range got {
			w := want[i]
			if g.Start != w.Start || g.Duration != w.Duration || g.PID != w.PID || g.MB != w.MB ||
				kind(g.SrcKind) != kind(w.SrcKind) || kind(g.DstKind) != kind(w.DstKind) ||
				nsysdb.StripAPIVersion(g.API) != nsysdb.StripAPIVersion(w.API) {
				t.Errorf("%s: row %d: the scan's %+v, the rule's %+v", what, i+1, g, w)
			}
		}
	}
	listed := func(path string) []nsysrule.FlaggedCopy {
		t.Helper()
		src, err := source.Open(context.Background(), path, source.Options{Nsys: filepath.Join(t.TempDir(), "no-nsys")})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		rows, err := listedRows(context.Background(), src)
		var ie *inputerr.Error
		if errors.As(err, &ie) && strings.HasPrefix(ie.Problem, capture.ProblemNoCopies) {
			return nil // refused, as the audit is
		}
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	n, folders := 0, 0
	for _, rule := range csvs {
		base := strings.TrimSuffix(rule, "_"+nsysrule.Name+".csv")
		if _, err := os.Stat(base + ".sqlite"); err != nil {
			continue
		}
		want, err := nsysrule.ReadCSV(rule)
		if err != nil {
			t.Fatal(err)
		}
		compare(base+".sqlite", listed(base+".sqlite"), want)
		n++
		// The CSV reports of the same capture, alone in a folder.
		reports := []string{"_cuda_api_trace.csv", "_cuda_gpu_trace.csv"}
		if _, err := os.Stat(base + reports[1]); err != nil || folders == 3 {
			continue
		}
		dir := t.TempDir()
		for _, r := range reports {
			fixture.Copy(t, base+r, filepath.Join(dir, "cap"+r))
		}
		compare(base+" (CSV reports)", listed(dir), want)
		folders++
	}
	if n < 20 || folders == 0 {
		t.Errorf("%d shipped exports and %d CSV folders compared, want the 20 or more with the rule's output", n, folders)
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
