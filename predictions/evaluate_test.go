package predictions

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/capture"
)

func verdicts(r *Result) map[string]Verdict {
	out := map[string]Verdict{}
	for _, c := range r.Claims {
		out[c.ID] = c.Verdict
	}
	return out
}

func wantVerdicts(t *testing.T, r *Result, want map[string]Verdict) {
	t.Helper()
	got := verdicts(r)
	for id, w := range want {
		if got[id] != w {
			c := r.Claim(id)
			t.Errorf("%s = %s, want %s (reason %q)", id, got[id], w, c.Reason)
		}
	}
}

func hasDiag(r *Result, code string, level Level) *Diagnostic {
	for i, d := range r.Diagnostics {
		if d.Code == code && d.Level == level {
			return &r.Diagnostics[i]
		}
	}
	return nil
}

func allVerdicts(v Verdict) map[string]Verdict {
	out := map[string]Verdict{}
	for _, s := range claimSpecs {
		out[s.id] = v
	}
	return out
}

// dropAsync removes the last n cudaMemcpyAsync calls.
func dropAsync(c *capture.Capture, n int) {
	var idx []int
	for i, a := range c.Calls {
		if a.Name == apiMemcpyAsync {
			idx = append(idx, i)
		}
	}
	drop := map[int]bool{}
	for _, i := range idx[len(idx)-n:] {
		drop[i] = true
	}
	var keep []capture.APICall
	for i, a := range c.Calls {
		if !drop[i] {
			keep = append(keep, a)
		}
	}
	c.Calls = keep
}

func TestSyntheticAllHeld(t *testing.T) {
	r := Evaluate(synthCapture(synthOpts{}))
	wantVerdicts(t, r, allVerdicts(Held))
	if !r.AllHeld() {
		t.Errorf("AllHeld false: %+v", r.Predictions)
	}
	if r.Input.Thread != "7/7" {
		t.Errorf("thread %q", r.Input.Thread)
	}
	// Check the numbers against the synthetic design.
	floor := r.Claim("1.floor")
	if want := (25.0 / (10 / 2.0)); !near(*floor.Measured, want, 1e-6) {
		t.Errorf("1.floor measured %v, want %v", *floor.Measured, want)
	}
	if s := *r.Claim("2.pageable").Measured; !near(s, 9/(9+0.001+0.02), 1e-4) {
		t.Errorf("2.pageable share %v", s)
	}
	if got := *r.Claim("4.calltime").Measured; !near(got, 9/0.004, 1e-6) {
		t.Errorf("4.calltime %v", got)
	}
	if got := *r.Claim("3.factor").Measured; !near(got, 4/0.05, 1e-6) {
		t.Errorf("3.factor measured %v", got)
	}
	if len(r.Copies) != 20 || len(r.Async) != 2 || len(r.Kernels) != 2 || len(r.AsyncCalls) != 1 {
		t.Errorf("tables: %d copies, %d async, %d kernels, %d call lists", len(r.Copies), len(r.Async), len(r.Kernels), len(r.AsyncCalls))
	}
	if n := len(r.AsyncCalls[0].PageableMs); n != 10 {
		t.Errorf("%d pageable call durations", n)
	}
	if len(r.Diagnostics) != 0 {
		t.Errorf("diagnostics: %+v", r.Diagnostics)
	}
	if r.Exercise.Verdict != "answered" || r.Exercise.Answer != "about the same" {
		t.Errorf("exercise %+v", r.Exercise)
	}
	if k := r.Kernels[0]; k.Bytes != 128*mib || !strings.Contains(k.BytesFrom, "design") {
		t.Errorf("kernel bytes %d from %q", k.Bytes, k.BytesFrom)
	}
}

func near(a, b, rel float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= rel*b
}

func TestSyntheticNoNVTX(t *testing.T) {
	with := Evaluate(synthCapture(synthOpts{}))
	without := Evaluate(synthCapture(synthOpts{noNVTX: true}))
	wantVerdicts(t, without, allVerdicts(Held))
	for _, c := range with.Claims {
		o := without.Claim(c.ID)
		if !near(*o.Measured, *c.Measured, 1e-12) {
			t.Errorf("%s: %v without NVTX, %v with", c.ID, *o.Measured, *c.Measured)
		}
	}
	if !strings.Contains(fmt.Sprint(without.Claim("2.pinned").Evidence), "no NVTX ranges") {
		t.Errorf("evidence does not say how the groups were found: %v", without.Claim("2.pinned").Evidence)
	}
}

func TestSyntheticCSVLike(t *testing.T) {
	r := Evaluate(synthCapture(synthOpts{csvLike: true}))
	wantVerdicts(t, r, map[string]Verdict{
		"1.floor": Unavailable, "1.growth": Unavailable, "2.pageable": Held, "2.pinned": Held,
		"3.factor": Unavailable, "4.calltime": Held, "4.bytes": Unavailable,
	})
	if !strings.Contains(r.Claim("1.floor").Reason, "no per-copy records") {
		t.Errorf("1.floor reason %q", r.Claim("1.floor").Reason)
	}
	if ev := fmt.Sprint(r.Claim("4.calltime").Evidence); !strings.Contains(ev, "rows") {
		t.Errorf("4.calltime evidence names no CSV rows: %s", ev)
	}
	if r.Exercise.Verdict != "unavailable" {
		t.Errorf("exercise %+v", r.Exercise)
	}
}

func TestAsyncCounts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		perSrc int
		drop   int
		found  string
		noNVTX bool
	}{
		{"0 calls", 11, 22, "found 0 cudaMemcpyAsync", true},
		{"21 calls", 11, 1, "found 21 cudaMemcpyAsync", true},
		{"33 calls", 17, 1, "found 33 cudaMemcpyAsync", true},
		{"33 calls with NVTX", 17, 1, "holds 16 cudaMemcpyAsync", false},
		{"21 calls with NVTX", 11, 1, "holds 9 cudaMemcpyAsync", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := synthCapture(synthOpts{asyncPerSrc: tc.perSrc, noNVTX: tc.noNVTX})
			dropAsync(c, tc.drop)
			r := Evaluate(c)
			wantVerdicts(t, r, map[string]Verdict{"1.floor": Held, "2.pageable": Unavailable, "2.pinned": Unavailable,
				"4.calltime": Unavailable, "4.bytes": Unavailable, "3.factor": Held})
			if reason := r.Claim("2.pageable").Reason; !strings.Contains(reason, tc.found) {
				t.Errorf("reason %q does not say %q", reason, tc.found)
			}
		})
	}
}

func TestOpenRange(t *testing.T) {
	// The capture ended inside the last range, but every launch is there.
	r := Evaluate(synthCapture(synthOpts{openRange: "kernel-zero-copy"}))
	wantVerdicts(t, r, allVerdicts(Held))
	if hasDiag(r, CodeOpenRange, Warning) == nil {
		t.Errorf("no open-range warning: %+v", r.Diagnostics)
	}
	// An open range whose program stopped early: counts fall short.
	r = Evaluate(synthCapture(synthOpts{openRange: "h2d-pinned", crash: true, dropCopies: map[string]int{"h2d-pinned": 4}}))
	wantVerdicts(t, r, map[string]Verdict{"1.floor": Unavailable, "1.growth": Unavailable, "3.factor": Unavailable,
		"2.pinned": Unavailable, "4.calltime": Unavailable})
	if reason := r.Claim("1.floor").Reason; !strings.Contains(reason, "9 x 1 MiB") || !strings.Contains(reason, "expected 13") {
		t.Errorf("reason %q does not say found vs expected", reason)
	}
}

func TestPinnedGroupIsPageable(t *testing.T) {
	for _, noNVTX := range []bool{false, true} {
		r := Evaluate(synthCapture(synthOpts{noNVTX: noNVTX, pinnedKind: capture.MemPageable}))
		wantVerdicts(t, r, map[string]Verdict{"1.floor": Unavailable, "2.pinned": Unavailable, "4.calltime": Unavailable})
		d := hasDiag(r, CodePinnedSourcePageable, Error)
		if d == nil {
			t.Fatalf("noNVTX=%v: no pinned-source-pageable error: %+v", noNVTX, r.Diagnostics)
		}
		if !strings.Contains(d.Message, "cudaMallocHost") {
			t.Errorf("message %q", d.Message)
		}
	}
}

func TestPinnedSlowerWarning(t *testing.T) {
	// Pinned at 2 GB/s: slower than pageable at every size.
	r := Evaluate(synthCapture(synthOpts{pinnedRate: 2}))
	if r.Claim("1.floor").Verdict != Died {
		t.Errorf("1.floor %s", r.Claim("1.floor").Verdict)
	}
	d := hasDiag(r, CodePinnedSlower, Warning)
	if d == nil || !strings.Contains(d.Message, "cudaMallocHost") {
		t.Errorf("no pinned-slower warning: %+v", r.Diagnostics)
	}
}

func TestTwoThreads(t *testing.T) {
	r := Evaluate(synthCapture(synthOpts{otherThread: true}))
	wantVerdicts(t, r, allVerdicts(Held))
	if r.Input.Thread != "7/7" {
		t.Errorf("read thread %q, want the one with the cudaMemcpyAsync calls", r.Input.Thread)
	}
	if d := hasDiag(r, CodeOtherThreadsIgnored, Info); d == nil || !strings.Contains(d.Message, "7/8") {
		t.Errorf("no other-threads-ignored info: %+v", r.Diagnostics)
	}
}

func TestSourcesDisagree(t *testing.T) {
	c := synthCapture(synthOpts{})
	c.Program = &capture.Measurements{Schema: capture.MeasurementsSchema,
		Async: []capture.AsyncTiming{
			{Source: "pageable", CallMs: 9, CompletionMs: 9.1},
			{Source: "pinned", CallMs: 0.5, CompletionMs: 1.2}, // share 0.42: died
		}}
	r := Evaluate(c)
	cl := r.Claim("2.pinned")
	if cl.Verdict != Held || cl.From != SourceTrace {
		t.Errorf("2.pinned %s from %s; the trace decides", cl.Verdict, cl.From)
	}
	if len(cl.Sources) != 2 || cl.Sources[1].Verdict != Died {
		t.Errorf("sources %+v", cl.Sources)
	}
	if d := hasDiag(r, CodeSourcesDisagree, Warning); d == nil || !strings.Contains(d.Message, "2.pinned") {
		t.Errorf("no sources-disagree warning: %+v", r.Diagnostics)
	}
	// The program gives no part 1: the trace still answers, the program's
	// source says why it cannot.
	if s := r.Claim("1.floor").Sources; len(s) != 2 || s[1].Verdict != Unavailable || s[1].Reason == "" {
		t.Errorf("1.floor sources %+v", s)
	}
}

func TestProgramOnlyCallTimeNeedsTrace(t *testing.T) {
	c := &capture.Capture{Path: "x.txt", Format: capture.FormatTranscript, Program: &capture.Measurements{
		Async: []capture.AsyncTiming{{Source: "pageable", CallMs: 9, CompletionMs: 9.1}, {Source: "pinned", CallMs: 0.004, CompletionMs: 1.2}},
	}}
	r := Evaluate(c)
	wantVerdicts(t, r, map[string]Verdict{"2.pageable": Held, "2.pinned": Held, "4.calltime": Unavailable, "4.bytes": Unavailable, "1.floor": Unavailable})
	if !strings.Contains(r.Claim("4.calltime").Reason, "2250.0x") {
		t.Errorf("reason %q", r.Claim("4.calltime").Reason)
	}
}

func TestEmptyCapture(t *testing.T) {
	r := Evaluate(&capture.Capture{Path: "empty", Format: capture.FormatSQLite})
	wantVerdicts(t, r, allVerdicts(Unavailable))
	for _, c := range r.Claims {
		if c.Reason == "" {
			t.Errorf("%s unavailable without a reason", c.ID)
		}
	}
}

func TestNames(t *testing.T) {
	n := strings.Join(Names(), ",")
	for _, want := range []string{apiMemcpy, apiMemcpyAsync, apiStreamSync, apiLaunchKernel} {
		if !strings.Contains(n, want) {
			t.Errorf("Names() lacks %s", want)
		}
	}
}

// A loader that kept only the program's thread (capture.Options.ProgramThread)
// lists the others in OtherThreads: the same thread is read and the same
// other-threads-ignored message given.
func TestTwoThreadsLoadedApart(t *testing.T) {
	whole := Evaluate(synthCapture(synthOpts{otherThread: true}))
	c := synthCapture(synthOpts{otherThread: true})
	var mine, others []capture.APICall
	for _, a := range c.Calls {
		if a.PID == 7 && a.TID == 7 {
			mine = append(mine, a)
		} else {
			others = append(others, a)
		}
	}
	if len(others) == 0 {
		t.Fatal("the synthetic capture has no second thread")
	}
	c.Calls, c.OtherThreads = mine, capture.CountThreads(others)
	apart := Evaluate(c)
	wantVerdicts(t, apart, allVerdicts(Held))
	if apart.Input.Thread != whole.Input.Thread {
		t.Errorf("read thread %q, want %q", apart.Input.Thread, whole.Input.Thread)
	}
	d1, d2 := hasDiag(whole, CodeOtherThreadsIgnored, Info), hasDiag(apart, CodeOtherThreadsIgnored, Info)
	if d1 == nil || d2 == nil || d1.Message != d2.Message {
		t.Errorf("other-threads-ignored differs:\n%+v\n%+v", d1, d2)
	}
}
