package predictions

import (
	"reflect"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/program"
	"github.com/nsyscheck/nsyscheck/vocab"
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
			t.Errorf("%s = %s, want %s (reason %+v)", id, got[id], w, c.Why)
		}
	}
}

func hasDiag(r *Result, code diag.Code, level diag.Level) *diag.Diagnostic {
	for i, d := range r.Diagnostics {
		if d.Code() == code && d.Level == level {
			return &r.Diagnostics[i]
		}
	}
	return nil
}

// details are the result's diagnostics' details of type T.
func details[T diag.Detail](r *Result) []T {
	var out []T
	for _, d := range r.Diagnostics {
		if x, ok := d.Detail.(T); ok {
			out = append(out, x)
		}
	}
	return out
}

// anyDetail reports whether a diagnostic's detail of type T satisfies ok.
func anyDetail[T diag.Detail](r *Result, ok func(T) bool) bool {
	for _, x := range details[T](r) {
		if ok(x) {
			return true
		}
	}
	return false
}

// whyOf is the first source's reason a claim gives, nil where none.
func whyOf(c *Claim) Why {
	if len(c.Why) == 0 {
		return nil
	}
	return c.Why[0].Why
}

// factsOf are the facts of a claim's evidence of type T.
func factsOf[T Fact](ev []Evidence) []T {
	var out []T
	for _, e := range ev {
		if f, ok := e.Fact.(T); ok {
			out = append(out, f)
		}
	}
	return out
}

func allVerdicts(v Verdict) map[string]Verdict {
	out := map[string]Verdict{}
	for _, p := range Lesson.Parts() {
		for _, s := range p.Claims {
			out[s.ID] = v
		}
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
	if r.Input.Thread == nil || *r.Input.Thread != (vocab.Thread{PID: 7, TID: 7}) {
		t.Errorf("thread %v", r.Input.Thread)
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
	if len(CopyRows.Of(r)) != 20 || len(AsyncRows.Of(r)) != 2 || len(KernelRows.Of(r)) != 2 || len(CallRows.Of(r)) != 1 {
		t.Errorf("tables: %d copies, %d async, %d kernels, %d call lists", len(CopyRows.Of(r)), len(AsyncRows.Of(r)), len(KernelRows.Of(r)), len(CallRows.Of(r)))
	}
	if n := len(CallRows.Of(r)[0].PageableMs); n != 10 {
		t.Errorf("%d pageable call durations", n)
	}
	if len(r.Diagnostics) != 0 {
		t.Errorf("diagnostics: %+v", r.Diagnostics)
	}
	if r.Exercise.Verdict != vocab.Answered || r.Exercise.Answer != GainSame {
		t.Errorf("exercise %+v", r.Exercise)
	}
	if k := KernelRows.Of(r)[0]; k.Bytes != 128*mib || k.BytesFrom.Given || k.BytesFrom.Implied {
		t.Errorf("kernel bytes %d from %+v, want the lesson's design", k.Bytes, k.BytesFrom)
	}
}

func near(a, b, rel float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	if b < 0 {
		return d <= -rel*b
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
	if m := factsOf[AsyncMethod](without.Claim("2.pinned").Evidence); len(m) != 1 || reflect.TypeOf(m[0].Groups) != reflect.TypeOf(AsyncByCopies{}) {
		t.Errorf("evidence does not say the groups were found by their copies: %+v", without.Claim("2.pinned").Evidence)
	}
}

func TestSyntheticCSVLike(t *testing.T) {
	r := Evaluate(synthCapture(synthOpts{csvLike: true}))
	wantVerdicts(t, r, map[string]Verdict{
		"1.floor": Unavailable, "1.growth": Unavailable, "2.pageable": Held, "2.pinned": Held,
		"3.factor": Unavailable, "4.calltime": Held, "4.bytes": Unavailable,
	})
	if w, ok := whyOf(r.Claim("1.floor")).(NoCopyRecords); !ok {
		t.Errorf("1.floor reason %+v, want no per-copy records", w)
	}
	rows := 0
	for _, e := range r.Claim("4.calltime").Evidence {
		for _, rec := range e.Records {
			if rec.Rows != nil && rec.Rows.First > 0 {
				rows++
			}
		}
	}
	if rows != 2 {
		t.Errorf("4.calltime evidence names %d groups of CSV rows, want 2: %+v", rows, r.Claim("4.calltime").Evidence)
	}
	if r.Exercise.Verdict != vocab.Unanswered {
		t.Errorf("exercise %+v", r.Exercise)
	}
}

func TestAsyncCounts(t *testing.T) {
	// Groups that deviate from the lesson's counts still give verdicts; the
	// deviation is a diagnostic that names what was found.
	for _, tc := range []struct {
		name   string
		perSrc int
		drop   int
		found  func(r *Result) bool
		noNVTX bool
	}{
		{"21 calls", 11, 1, func(r *Result) bool {
			return anyDetail(r, func(d AsyncGroupShape) bool { return d.N == 10 && d.Bytes == 64*mib && d.Source == vocab.MemPinned })
		}, true},
		{"33 calls", 17, 1, func(r *Result) bool {
			return anyDetail(r, func(d AsyncGroupShape) bool { return d.N == 17 && d.Bytes == 64*mib && d.Source == vocab.MemPageable })
		}, true},
		{"33 calls with NVTX", 17, 1, func(r *Result) bool { return anyDetail(r, func(d AsyncRangeCount) bool { return d.N == 16 }) }, false},
		{"21 calls with NVTX", 11, 1, func(r *Result) bool { return anyDetail(r, func(d AsyncRangeCount) bool { return d.N == 9 }) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := synthCapture(synthOpts{asyncPerSrc: tc.perSrc, noNVTX: tc.noNVTX})
			dropAsync(c, tc.drop)
			r := Evaluate(c)
			wantVerdicts(t, r, allVerdicts(Held))
			if !tc.found(r) {
				t.Errorf("no lesson-structure diagnostic naming the groups found: %+v", r.Diagnostics)
			}
			if ct := factsOf[CallTotals](r.Claim("4.calltime").Evidence); len(ct) != 1 || !ct[0].OfMeans {
				t.Errorf("groups of different sizes, but 4.calltime does not compare means: %+v", ct)
			}
			if gb := factsOf[GroupBytes](r.Claim("4.bytes").Evidence); len(gb) != 1 || !gb[0].PerCopy {
				t.Errorf("groups of different sizes, but 4.bytes does not compare bytes per copy: %+v", gb)
			}
		})
	}
	// Ambiguous groups stay unavailable: no NVTX, no copy records, and not
	// the lesson's exact count of calls to split by order.
	for _, tc := range []struct {
		name        string
		perSrc, drp int
		found       int
	}{
		{"0 calls", 11, 22, 0},
		{"21 calls", 11, 1, 21},
	} {
		t.Run("csv-like "+tc.name, func(t *testing.T) {
			c := synthCapture(synthOpts{asyncPerSrc: tc.perSrc, csvLike: true})
			dropAsync(c, tc.drp)
			r := Evaluate(c)
			wantVerdicts(t, r, map[string]Verdict{"2.pageable": Unavailable, "2.pinned": Unavailable,
				"4.calltime": Unavailable, "4.bytes": Unavailable})
			if w, ok := whyOf(r.Claim("2.pageable")).(AsyncCount); !ok || w.N != tc.found {
				t.Errorf("reason %+v, want %d cudaMemcpyAsync calls found", whyOf(r.Claim("2.pageable")), tc.found)
			}
		})
	}
	// Without NVTX but with copy records, no call at all leaves nothing to group.
	c := synthCapture(synthOpts{noNVTX: true})
	dropAsync(c, 22)
	r := Evaluate(c)
	if cl := r.Claim("2.pageable"); cl.Verdict != Unavailable || whyOf(cl) != (NoAsyncPair{Thread: vocab.Thread{PID: 7, TID: 7}, N: 0}) {
		t.Errorf("2.pageable %s: %+v", cl.Verdict, cl.Why)
	}
}

func TestOpenRange(t *testing.T) {
	// The capture ended inside the last range, but every launch is there.
	r := Evaluate(synthCapture(synthOpts{openRange: "kernel-zero-copy"}))
	wantVerdicts(t, r, allVerdicts(Held))
	if hasDiag(r, CodeOpenRange, diag.Warning) == nil {
		t.Errorf("no open-range warning: %+v", r.Diagnostics)
	}
	// An open range whose program stopped early: part 1's h2d groups hold
	// 9 copies per size and give their numbers; what came after is missing.
	r = Evaluate(synthCapture(synthOpts{openRange: "h2d-pinned", crash: true, dropCopies: map[string]int{"h2d-pinned": 4}}))
	wantVerdicts(t, r, map[string]Verdict{"1.floor": Held, "1.growth": Held, "3.factor": Unavailable,
		"2.pinned": Unavailable, "4.calltime": Unavailable})
	if !anyDetail(r, func(d RangeShape) bool {
		return d.Range == "h2d-pinned" && len(d.Counts) == len(sweepSizes) && d.Counts[0] == (SizeCount{Bytes: mib, N: 9})
	}) {
		t.Errorf("no lesson-structure diagnostic saying what the range holds: %+v", r.Diagnostics)
	}
	// The program stopped before part 2: no ranges and no calls to group.
	if w, ok := whyOf(r.Claim("2.pinned")).(NoAsyncPair); !ok || w.N != 0 {
		t.Errorf("2.pinned reason %+v, want no cudaMemcpyAsync calls to group", whyOf(r.Claim("2.pinned")))
	}
}

func TestPinnedGroupIsPageable(t *testing.T) {
	// With NVTX the groups are unambiguous: the "pinned" copies' numbers
	// give the verdicts (they are as slow as the pageable ones), and the
	// broken precondition is an error beside them.
	// Without NVTX, two pageable runs per size cannot be told apart.
	for _, noNVTX := range []bool{false, true} {
		// A malloc'd "pinned" buffer behaves like the pageable one.
		r := Evaluate(synthCapture(synthOpts{noNVTX: noNVTX, pinnedKind: vocab.MemPageable, pinnedRate: 10,
			asyncCallMs: map[vocab.MemKind]float64{vocab.MemPageable: 9, vocab.MemPinned: 9}, asyncSyncMs: map[vocab.MemKind]float64{vocab.MemPageable: 0.02, vocab.MemPinned: 0.02}}))
		want := Died
		if noNVTX {
			want = Unavailable
		}
		wantVerdicts(t, r, map[string]Verdict{"1.floor": want, "2.pinned": want, "4.calltime": want})
		if len(details[PinnedPageable](r))+len(details[PinnedPageableRuns](r)) == 0 || hasDiag(r, CodePinnedSourcePageable, diag.Error) == nil {
			t.Fatalf("noNVTX=%v: no pinned-source-pageable error: %+v", noNVTX, r.Diagnostics)
		}
	}
}

func TestPinnedSlowerWarning(t *testing.T) {
	// Pinned at 2 GB/s: slower than pageable at every size.
	r := Evaluate(synthCapture(synthOpts{pinnedRate: 2}))
	if r.Claim("1.floor").Verdict != Died {
		t.Errorf("1.floor %s", r.Claim("1.floor").Verdict)
	}
	if s := details[PinnedSlower](r); len(s) == 0 || len(s[0].Sizes) != len(sweepSizes) || hasDiag(r, CodePinnedSlower, diag.Warning) == nil {
		t.Errorf("no pinned-slower warning naming every size: %+v", r.Diagnostics)
	}
}

func TestTwoThreads(t *testing.T) {
	r := Evaluate(synthCapture(synthOpts{otherThread: true}))
	wantVerdicts(t, r, allVerdicts(Held))
	if r.Input.Thread == nil || *r.Input.Thread != (vocab.Thread{PID: 7, TID: 7}) {
		t.Errorf("read thread %v, want the one with the cudaMemcpyAsync calls", r.Input.Thread)
	}
	if !anyDetail(r, func(d OtherThreads) bool {
		return len(d.Others) == 1 && d.Others[0].Thread == vocab.Thread{PID: 7, TID: 8}
	}) {
		t.Errorf("no other-threads-ignored info naming 7/8: %+v", r.Diagnostics)
	}
}

func TestSourcesDisagree(t *testing.T) {
	c := synthCapture(synthOpts{})
	c.Program = &program.Measurements{Schema: program.Schema,
		Async: []program.AsyncTiming{
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
	if !anyDetail(r, func(d SourcesDisagree) bool {
		return d.Claim == "2.pinned" && d.Decided == SourceTrace && d.DecidedVerdict == Held && d.OtherVerdict == Died
	}) {
		t.Errorf("no sources-disagree warning: %+v", r.Diagnostics)
	}
	// The program gives no part 1: the trace still answers, the program's
	// source says why it cannot.
	if s := r.Claim("1.floor").Sources; len(s) != 2 || s[1].Verdict != Unavailable || s[1].Why == nil {
		t.Errorf("1.floor sources %+v", s)
	}
}

func TestProgramOnlyCallTimeNeedsTrace(t *testing.T) {
	c := &capture.Capture{Path: "x.txt", Format: capture.FormatTranscript, Program: &program.Measurements{
		Async: []program.AsyncTiming{{Source: "pageable", CallMs: 9, CompletionMs: 9.1}, {Source: "pinned", CallMs: 0.004, CompletionMs: 1.2}},
	}}
	r := Evaluate(c)
	wantVerdicts(t, r, map[string]Verdict{"2.pageable": Held, "2.pinned": Held, "4.calltime": Unavailable, "4.bytes": Unavailable, "1.floor": Unavailable})
	if w, ok := whyOf(r.Claim("4.calltime")).(ProgramNoCallTotals); !ok || w.MeanRatio == nil || !near(*w.MeanRatio, 2250, 1e-9) {
		t.Errorf("reason %+v, want the mean call times' 2250x for reference", whyOf(r.Claim("4.calltime")))
	}
}

func TestEmptyCapture(t *testing.T) {
	r := Evaluate(&capture.Capture{Path: "empty", Format: capture.FormatSQLite})
	wantVerdicts(t, r, allVerdicts(Unavailable))
	for _, c := range r.Claims {
		if len(c.Why) == 0 {
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
	if *apart.Input.Thread != *whole.Input.Thread {
		t.Errorf("read thread %v, want %v", *apart.Input.Thread, *whole.Input.Thread)
	}
	d1, d2 := details[OtherThreads](whole), details[OtherThreads](apart)
	if len(d1) != 1 || len(d2) != 1 || !reflect.DeepEqual(d1, d2) {
		t.Errorf("other-threads-ignored differs:\n%+v\n%+v", d1, d2)
	}
}

func TestOtherCountsWithoutNVTX(t *testing.T) {
	// 9 copies per size and source, no NVTX: the runs of copies still give
	// the groups; the last 6 of each (the lesson's 3 warm-ups dropped) are
	// timed, and the deviation is named.
	drop := map[string]int{"h2d-pageable": 4, "h2d-pinned": 4, "d2h-pageable": 4, "d2h-pinned": 4}
	r := Evaluate(synthCapture(synthOpts{noNVTX: true, dropCopies: drop}))
	wantVerdicts(t, r, allVerdicts(Held))
	want := GroupNote{Dir: vocab.H2D, Source: vocab.MemPageable, Bytes: mib, N: 9, Timed: 6}
	if !anyDetail(r, func(d RunsShape) bool { return d.Dir == vocab.H2D && len(d.Runs) > 0 && d.Runs[0] == want }) {
		t.Errorf("no lesson-structure diagnostic naming the runs: %+v", r.Diagnostics)
	}
	for _, row := range CopyRows.Of(r) {
		if row.Runs != 6 {
			t.Errorf("%s %s %d: %d runs, want 6", row.Direction, row.Source, row.Bytes, row.Runs)
		}
	}
}

func TestPinnedBeforePageable(t *testing.T) {
	// Swap the h2d ranges' places in time: the groups are still found by
	// name, with the same numbers, and the order is named.
	c := synthCapture(synthOpts{})
	base := Evaluate(synthCapture(synthOpts{}))
	var p, q *capture.Range
	for i := range c.Ranges {
		switch c.Ranges[i].Name {
		case "h2d-pageable":
			p = &c.Ranges[i]
		case "h2d-pinned":
			q = &c.Ranges[i]
		}
	}
	shift := q.Start - p.Start
	moved := map[int64]bool{}
	for i := range c.Calls {
		a := &c.Calls[i]
		switch {
		case p.Contains(a.Start, a.End):
			a.Start, a.End = a.Start+(q.End-q.Start)+1, a.End+(q.End-q.Start)+1
			moved[a.CorrelationID] = true
		case q.Contains(a.Start, a.End):
			a.Start, a.End = a.Start-shift, a.End-shift
			moved[a.CorrelationID] = true
		}
	}
	pLen, qLen := p.End-p.Start, q.End-q.Start
	q.Start, q.End = p.Start, p.Start+qLen
	p.Start, p.End = q.End+1, q.End+1+pLen
	c.Sort()
	r := Evaluate(c)
	wantVerdicts(t, r, allVerdicts(Held))
	if !anyDetail(r, func(d RangeOrder) bool { return d == RangeOrder{Pinned: "h2d-pinned", Pageable: "h2d-pageable"} }) {
		t.Errorf("no diagnostic naming the order: %+v", r.Diagnostics)
	}
	if *r.Claim("1.floor").Measured != *base.Claim("1.floor").Measured {
		t.Errorf("1.floor %v, in the lesson's order %v", *r.Claim("1.floor").Measured, *base.Claim("1.floor").Measured)
	}
	if len(moved) == 0 {
		t.Fatal("no call moved")
	}
}
