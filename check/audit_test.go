package check

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/framework"
	"github.com/nsyscheck/nsyscheck/internal/fixture"
	"github.com/nsyscheck/nsyscheck/replay"
	"github.com/nsyscheck/nsyscheck/runinfo"
	"github.com/nsyscheck/nsyscheck/timeline"
	"github.com/nsyscheck/nsyscheck/vocab"
)

func TestReadRunRates(t *testing.T) {
	dir := filepath.Join("..", "testdata", "captures", "h200-run")
	r, err := AuditRates(AuditOptions{RatesDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var h2d, d2h int
	for _, p := range r.Copies {
		switch p.Direction {
		case vocab.CopyHtoD:
			h2d++
		case vocab.CopyDtoH:
			d2h++
		}
		if p.GBps < 20 || p.GBps > 64 {
			t.Errorf("pinned rate %+v out of the H200's range", p)
		}
	}
	if h2d != 5 || d2h != 5 {
		t.Errorf("%d HtoD and %d DtoH pinned rates, want 5 and 5", h2d, d2h)
	}
	// 256 MiB pinned HtoD: 4.860688 ms in the run's results.
	for _, p := range r.Copies {
		if p.Direction == vocab.CopyHtoD && p.Bytes == 268435456 && math.Abs(p.GBps-268435456/4.860688e6) > 1e-9 {
			t.Errorf("256 MiB rate = %g", p.GBps)
		}
	}
	if r.AsyncCallNs <= 0 || r.AsyncCallNs > 1e6 {
		t.Errorf("pinned async call = %g ns", r.AsyncCallNs)
	}
	if l := r.Link; math.Abs(r.LinkGBps-63.015) > 0.01 || r.Source != dir || l.Kind != audit.LinkRun || l.GBps != r.LinkGBps ||
		l.File != filepath.Join(dir, runinfo.InfoFile) || l.Gen == 0 || l.Width == 0 || l.GPU == "" {
		t.Errorf("link %g (%+v), source %q", r.LinkGBps, r.Link, r.Source)
	}
	// Without a run folder: the assumed link, said to be assumed.
	r, err = AuditRates(AuditOptions{})
	if err != nil || len(r.Copies) != 0 || r.LinkGBps != DefaultLinkGBps ||
		r.Link != (audit.LinkOrigin{Kind: audit.LinkAssumed, Gen: 5, Width: 16, GBps: DefaultLinkGBps}) {
		t.Errorf("no run folder: %+v, %v", r, err)
	}
	if r, err = AuditRates(AuditOptions{LinkGBps: 31.5}); err != nil || r.LinkGBps != 31.5 || r.Link != (audit.LinkOrigin{Kind: audit.LinkFlag, GBps: 31.5}) {
		t.Errorf("--link-gbps: %+v, %v", r, err)
	}
	if _, err := AuditRates(AuditOptions{RatesDir: filepath.Join("..", "testdata", "captures", "train-pinned")}); err == nil {
		t.Error("a capture folder taken for a run folder")
	}
}

// TestAuditRatesBounded: a rate the prediction would turn into nonsense or
// overflow (1e-300 GB/s predicted -9.2e18 ns) is refused, whether it comes
// from --link-gbps or from a run folder's run.json or results, and the
// message names where it came from; the bounds themselves are accepted.
func TestAuditRatesBounded(t *testing.T) {
	for _, v := range []float64{1e-300, 0.005, -3, 450.5, 4000, 10001, math.NaN(), math.Inf(1)} {
		_, err := AuditRates(AuditOptions{LinkGBps: v})
		if err == nil || !strings.Contains(err.Error(), "--link-gbps") || !strings.Contains(err.Error(), "between 0.01 and 450") {
			t.Errorf("--link-gbps %g: %v", v, err)
		}
	}
	for _, v := range []float64{MinRateGBps, MaxRateGBps} {
		if r, err := AuditRates(AuditOptions{LinkGBps: v}); err != nil || r.LinkGBps != v {
			t.Errorf("--link-gbps %g: %+v %v", v, r, err)
		}
	}
	src := filepath.Join("..", "testdata", "captures", "h200-run")
	edit := func(name, old, new string) string {
		dir := t.TempDir()
		for _, f := range []string{runinfo.InfoFile, runinfo.ResultsFile} {
			data, err := os.ReadFile(filepath.Join(src, f))
			if err != nil {
				t.Fatal(err)
			}
			if f == name {
				if !strings.Contains(string(data), old) {
					t.Fatalf("%s holds no %q", f, old)
				}
				data = []byte(strings.Replace(string(data), old, new, 1))
			}
			if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	dir := edit(runinfo.InfoFile, `"ratedGBps": 63.01538461538462`, `"ratedGBps": 1e-300`)
	if _, err := AuditRates(AuditOptions{RatesDir: dir}); err == nil || !strings.Contains(err.Error(), runinfo.InfoFile) {
		t.Errorf("run.json with a 1e-300 GB/s link: %v", err)
	}
	// A pinned copy whose time makes it slower than 10 MB/s, in a results
	// file the capture's checks accept.
	dir = edit(runinfo.ResultsFile, `"ms": 0.031994, "gbps": 32.7746`, `"ms": 319940, "gbps": 0.0000033`)
	if _, err := AuditRates(AuditOptions{RatesDir: dir}); err == nil || !strings.Contains(err.Error(), runinfo.ResultsFile) ||
		!strings.Contains(err.Error(), "between 0.01 and 562.5") {
		t.Errorf("a results file with a pinned copy at 1e-7 GB/s: %v", err)
	}
}

// TestAuditPyTorch runs the audit's whole path on the PyTorch captures:
// copies, findings, NVIDIA's rule read beside the capture (no nsys here),
// the framework and its way of pinning, the regions and their check, what
// pinning cost, and no exposures from nsys's injection or the DataLoader's
// workers.
func TestAuditPyTorch(t *testing.T) {
	dir := filepath.Join("..", "testdata", "captures")
	out, err := Audit(context.Background(), filepath.Join(dir, "train-pageable"), filepath.Join(dir, "train-pinned"),
		AuditOptions{Nsys: filepath.Join(t.TempDir(), "no-nsys")})
	if err != nil {
		t.Fatal(err)
	}
	b := out.Before
	if b.Copies != 207 || b.Sum(vocab.CopyHtoD, vocab.MemPageable, "").Count != 140 {
		t.Errorf("before: %d copies, %d pageable HtoD; want 207 and 140", b.Copies, b.Sum(vocab.CopyHtoD, vocab.MemPageable, "").Count)
	}
	if f := b.Finding("secretly-synchronous"); f == nil || f.Count != 140 {
		t.Errorf("secretly-synchronous = %+v", f)
	}
	if b.NVIDIA == nil || !b.NVIDIA.Available || !b.NVIDIA.Agree {
		t.Errorf("NVIDIA's rule = %+v", b.NVIDIA)
	}
	// The capture after shows the DataLoader's pin thread: the what-if
	// pins as it does, paying each batch's copy on the main thread.
	if b.Framework.Framework != framework.PyTorch || b.Replay.PinBy != replay.PinByThread || b.Replay.PinByFrom != audit.PinByAfter ||
		b.Replay.Shown == nil || b.Replay.Shown.Clue != audit.ClueThread || b.Replay.Shown.Thread != "pt_data_pin" || b.Replay.Recosted != 140 {
		t.Errorf("framework %+v, replay %+v", b.Framework, b.Replay)
	}
	// The steps are not faster, as every cost predicted (the pin thread's
	// work lands on the main thread): held; the epoch holds the first
	// step's loading of device code, which differs between the runs:
	// unavailable.
	c := out.Check
	if c == nil || c.Verdict != audit.Held || !out.Passed() || len(c.Regions) != 3 {
		t.Fatalf("check = %+v", c)
	}
	whole, epoch, step := c.Regions[0], c.Regions[1], c.Regions[2]
	if whole.Name != replay.CaptureRegion || whole.Judged || epoch.Name != "epoch" || epoch.Verdict != audit.Unavailable ||
		epoch.Why != audit.WhyStartUp || epoch.LoadingMs < 400 || epoch.AfterLoadingMs > 200 || !epoch.Faster || epoch.AfterOutside.MedianMs > 0.8*epoch.Outside.MedianMs {
		t.Errorf("whole capture %+v; epoch %+v", whole, epoch)
	}
	if step.Name != "step" || step.Verdict != audit.Held || step.Why != audit.WhyNoGain || step.Faster || step.Instances != 67 || step.AfterInstances != 67 ||
		math.Abs(step.PredictedMedianMs/step.AfterMedianMs-1) > 0.15 ||
		step.AfterCopyCallMs > step.CopyCallMs/10 {
		t.Errorf("step = %+v", step)
	}
	if c.PinAllocsAfter.Calls == 0 || c.PinAllocsAfter.ByAPI[0].API != "cudaHostAlloc" || c.PinAllocsAfter.HostNs <= c.PinAllocsBefore.HostNs {
		t.Errorf("pinning's cost: before %+v, after %+v", c.PinAllocsBefore, c.PinAllocsAfter)
	}
	for _, au := range []*audit.Audit{out.Before, out.After} {
		if len(au.Exposures) != 0 {
			t.Errorf("%s exposes %v", au.Capture, au.Exposures)
		}
	}
	if _, err := Audit(context.Background(), filepath.Join(dir, "no-such"), "", AuditOptions{}); err == nil {
		t.Error("audited a capture that is not there")
	}
	// --fail-above 5: the pageable run's batch copies hold about a fifth of
	// a median step; the pinned run's leftover copies are start-up, outside
	// the ranges.
	five := 0.05
	for name, pass := range map[string]bool{"train-pageable": false, "train-pinned": true} {
		one, err := Audit(context.Background(), filepath.Join(dir, name), "", AuditOptions{NoRule: true, FailAbove: &five})
		if err != nil {
			t.Fatal(err)
		}
		g := one.Before.Gate
		if g == nil || g.Passed() != pass || one.Passed() != pass || (!pass && g.Worst.Name != "step") || (pass && g.Worst.Share > 0.001) {
			t.Errorf("%s --fail-above 5: %+v", name, g)
		}
		if !pass && (g.Worst.Share < 0.15 || g.Worst.Share > 0.25) {
			t.Errorf("%s: pageable copies hold %.1f%% of a median step, want about a fifth", name, 100*g.Worst.Share)
		}
	}
}

// A pair that is not one program before and after its fix is refused,
// naming what differs: the lesson's program against a training loop moved
// other bytes and ran other kernels.
func TestAuditRefusesAnotherProgram(t *testing.T) {
	dir := filepath.Join("..", "testdata", "captures")
	_, err := Audit(context.Background(), filepath.Join(dir, "h200-pinned"), filepath.Join(dir, "train-pinned"), AuditOptions{NoRule: true})
	var e *audit.NotSameProgram
	if !errors.As(err, &e) || len(e.Differences) != 3 || !strings.Contains(err.Error(), "not captures of the same program") ||
		!strings.Contains(err.Error(), "only before: scaleCopy") {
		t.Errorf("h200-pinned against train-pinned: %v", err)
	}
	// --match names regions the captures have.
	_, err = Audit(context.Background(), filepath.Join(dir, "mixed-buffers"), filepath.Join(dir, "mixed-buffers"),
		AuditOptions{NoRule: true, Match: map[string]string{"pass-pageable": "pass-pinnned"}})
	if err == nil || !strings.Contains(err.Error(), "has no region pass-pinnned") || !strings.Contains(err.Error(), "pass-pinned") {
		t.Errorf("a misspelt match: %v", err)
	}
	if _, err := Audit(context.Background(), filepath.Join(dir, "train-pinned"), "", AuditOptions{PinBy: "glue"}); err == nil ||
		!strings.Contains(err.Error(), "in-place") {
		t.Errorf("--pin-by glue: %v", err)
	}
}

// TestAuditRatesDamagedRunInfo gives --rates the shipped run folder with
// its run.json cut short, and with a negative rated link: once the first
// was taken as no record at all (the run's status, GPU and link unread,
// its rates used) and the second as an unknown link. Both are refused,
// naming run.json.
func TestAuditRatesDamagedRunInfo(t *testing.T) {
	src := filepath.Join("..", "testdata", "captures", "h200-run")
	info, err := os.ReadFile(filepath.Join(src, runinfo.InfoFile))
	if err != nil {
		t.Fatal(err)
	}
	results, err := os.ReadFile(filepath.Join(src, runinfo.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		info []byte
		want string
	}{
		{"cut short", info[:len(info)/3], "not a run's record (is it cut short?), so the run is not known to have completed"},
		{"a negative rated link", []byte(strings.Replace(string(info), `"ratedGBps": 63.01538461538462`, `"ratedGBps": -5`, 1)),
			"the link's rated rate -5: give a rate in GB/s between 0.01 and 450"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, runinfo.InfoFile), c.info, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, runinfo.ResultsFile), results, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := AuditRates(AuditOptions{RatesDir: dir})
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, runinfo.InfoFile)+": "+c.want) {
			t.Errorf("%s: %v; want %q", c.name, err, c.want)
		}
	}
}

// The shipped capture whose steps order the legacy default stream against
// a blocking stream, its NULL-stream kernel moved to start while the
// blocking stream's kernel before it ran, is refused naming both ops
// (timeline.LegacyOrderError) and the export, not replayed on.
func TestAuditRefusesLegacyOrderContradicted(t *testing.T) {
	src := filepath.Join("..", "testdata", "captures", "nullstream-pageable", "nullstream-pageable.sqlite")
	p := fixture.SQLite(t, src, `UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = (SELECT k.end - 50000 FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE k.rowid = 1) WHERE rowid = 2`)
	_, err := AuditCapture(context.Background(), p, nil, AuditOptions{NoRule: true})
	var le *timeline.LegacyOrderError
	if !errors.As(err, &le) || le.Waiting.Corr != 132 || le.On.Corr != 129 || !strings.HasPrefix(err.Error(), p+": ") {
		t.Fatalf("err = %v, want the export's LegacyOrderError of correlation id 132 waiting on 129", err)
	}
	if _, err := AuditCapture(context.Background(), src, nil, AuditOptions{NoRule: true}); err != nil {
		t.Fatalf("the shipped capture: %v", err)
	}
}

// The shipped pipeline whose copies on stream 13 wait, by
// cudaStreamWaitEvent, for the copy an event recorded on stream 14, its
// recorded copy made to end after the waiting copy started, is refused
// naming both copies and the wait (timeline.EventWaitError): once audited
// as a PASS.
func TestAuditRefusesEventWaitContradicted(t *testing.T) {
	src := filepath.Join("..", "testdata", "captures", "pipeline-pinned", "pipeline-pinned.sqlite")
	p := fixture.SQLite(t, src, `UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET end = (SELECT m.start + 20000 FROM CUPTI_ACTIVITY_KIND_MEMCPY m WHERE m.correlationId = 223) WHERE correlationId = 218`)
	_, err := AuditCapture(context.Background(), p, nil, AuditOptions{NoRule: true})
	var we *timeline.EventWaitError
	if !errors.As(err, &we) || we.Waiting.Corr != 223 || we.On.Corr != 218 || we.Wait != 220 || !strings.HasPrefix(err.Error(), p+": ") {
		t.Fatalf("err = %v, want the export's EventWaitError of copy 223 waiting on copy 218 by correlation id 220", err)
	}
	if _, err := AuditCapture(context.Background(), src, nil, AuditOptions{NoRule: true}); err != nil {
		t.Fatalf("the shipped capture: %v", err)
	}
}
