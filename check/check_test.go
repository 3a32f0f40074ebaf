package check

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/runinfo"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/predictions"
)

func codes(r *predictions.Result) map[diag.Code]diag.Diagnostic {
	out := map[diag.Code]diag.Diagnostic{}
	for _, d := range r.Diagnostics {
		out[d.Code()] = d
	}
	return out
}

// A run folder: the rule's output is compared, run.json's link stated, and
// both read once, into Checked.Run.
func TestPathsRunFolder(t *testing.T) {
	ks, err := Paths([]string{"../testdata/captures/h200-run"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	k := ks[0]
	if k.Run == nil || k.Run.GPU == nil {
		t.Fatal("run.json of the run folder not read")
	}
	if l := k.PCIe(); l.RatedGBps <= 0 || l.GenMax == 0 || l.WidthMax == 0 {
		t.Errorf("PCIe() = %+v, want the run's PCIe link", l)
	}
	d := codes(k.Result)
	for _, c := range []diag.Code{diag.CodeNsysRule, diag.CodePCIe, diag.CodeResident} {
		if _, ok := d[c]; !ok {
			t.Errorf("no %s diagnostic; got %v", c, k.Result.Diagnostics)
		}
	}
	if n, ok := d[diag.CodeNsysRule].Detail.(diag.NsysRule); !ok || !n.Agrees || n.ByCopyRecords || d[diag.CodeNsysRule].Level != diag.Info {
		t.Errorf("nsys rule: %+v, want agreement (info)", d[diag.CodeNsysRule])
	}
}

// Enrich uses the facts it is given, not a run.json on disk.
func TestEnrichGivenFacts(t *testing.T) {
	c, err := capture.Load("../testdata/captures/h200-pinned/pinned.sqlite", LoadOptions(""))
	if err != nil {
		t.Fatal(err)
	}
	k := Evaluate(c)
	if _, ok := codes(k.Result)[diag.CodePCIe]; ok {
		t.Fatal("PCIe diagnostic before Enrich")
	}
	k.Enrich(&runinfo.Info{GPU: &runinfo.GPU{PCIe: runinfo.PCIe{GenMax: 5, WidthMax: 16, GenCurrent: 5, WidthCurrent: 16, RatedGBps: 63}}})
	d, ok := codes(k.Result)[diag.CodePCIe]
	if !ok {
		t.Fatalf("no %s diagnostic after Enrich with a link", diag.CodePCIe)
	}
	l, _ := d.Detail.(diag.PCIeLink)
	if l.GenMax != 5 || l.WidthMax != 16 || l.RatedGBps != 63 || l.PinnedBytes != 256<<20 || len(l.Pinned) != 2 || l.Pinned[0].Dir != "h2d" || !(l.Pinned[0].GBps > 0) {
		t.Errorf("PCIe link %+v, want Gen5 x16 rated 63 GB/s beside pinned H2D and D2H at 256 MiB", d.Detail)
	}
}

// An export that records other processes and environment is scanned.
func TestExposureScanned(t *testing.T) {
	ks, err := Paths([]string{"../testdata/exposure/exposed.sqlite"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range ks[0].Result.Diagnostics {
		if d.Code() == "capture-exposes" {
			found = true
		}
	}
	if !found {
		t.Errorf("no capture-exposes diagnostic on the exposed export: %v", ks[0].Result.Diagnostics)
	}
}

// A run folder whose run.json is cut short is refused: read as none, it
// dropped the run's link, and would drop a trace-lost or shared-GPU
// warning, beside verdicts that held.
func TestPathsRunFolderCutRunJSON(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"pinned.sqlite", "pinned.results.json", "run.json"} {
		b, err := os.ReadFile(filepath.Join("../testdata/captures/h200-run", name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "run.json" {
			b = b[:len(b)/3]
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Paths([]string{filepath.Join(dir, "pinned.sqlite")}, Options{})
	if err == nil || !strings.Contains(err.Error(), "run.json: not a run's record (is it cut short?)") || !strings.Contains(err.Error(), "once copied out") {
		t.Errorf("a cut run.json: %v", err)
	}
}
