package audit

import (
	"testing"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// TestHandler feeds the accumulator records as a reader hands them on:
// the metadata and gaps into the scan, the ranges before the copies, each
// copy placed in the innermost range of its call's thread, a batch call's
// host time counted once, a copy without a call apart, and the span from
// the trace's duration.
func TestHandler(t *testing.T) {
	a := NewAccumulator()
	scan := &capture.CopyScan{Path: "x"}
	h := a.Handler(scan)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(h.Meta(&records.Meta{GPU: "GPU X", NsysVersion: "2025.3", DurationNs: 5_000_000}))
	must(h.Gap(records.Gap{Fact: records.FactMemoryKinds, Reason: "no kinds"}))
	must(h.Gap(records.Gap{Fact: records.FactMemoryKinds, Reason: "said twice"}))
	must(h.Range(&records.Range{Name: "outer", Start: 0, End: 10_000, PID: 1, TID: 1}))
	must(h.Range(&records.Range{Name: "inner", Start: 100, End: 2_000, PID: 1, TID: 1}))
	must(h.Range(&records.Range{Name: "elsewhere", Start: 0, End: 10_000, PID: 1, TID: 2}))
	copyOp := func(corr, start, end int64, call *records.Call) *records.Op {
		return &records.Op{Kind: records.OpCopy, Copy: vocab.CopyHtoD, Src: vocab.MemPageable, Dst: vocab.MemDevice,
			Bytes: 1 << 20, Start: start, End: end, Corr: corr, PID: 1, Stream: 7, Call: call}
	}
	async := &records.Call{Name: "cudaMemcpyAsync", Start: 200, End: 1_200, Corr: 1, PID: 1, TID: 1, Thread: "main"}
	batch := &records.Call{Name: "cudaMemcpyBatchAsync", Start: 3_000, End: 3_400, Corr: 2, PID: 1, TID: 1}
	must(h.Op(copyOp(1, 300, 1_100, async)))
	must(h.Op(copyOp(2, 3_100, 3_200, batch)))
	must(h.Op(copyOp(2, 3_200, 3_300, batch)))
	must(h.Op(copyOp(9, 5_000, 5_100, nil)))
	must(h.Op(&records.Op{Kind: records.OpKernel, Name: "k", Start: 1, End: 2}))
	must(h.Counts(&records.Counts{Calls: 40, FirstCall: 10, LastCall: 20, Memsets: 3}))

	if scan.Meta.GPU != "GPU X" || scan.APICalls != 40 || scan.Memsets != 3 || scan.Span != 5_000_000 || scan.SpanFrom != capture.SpanTrace ||
		scan.Copies != 4 || scan.Unmatched != 1 || len(scan.Missing) != 1 || scan.Missing[0].Reason != "no kinds" {
		t.Fatalf("scan %+v", scan)
	}
	au := a.Finish(scan, Replayed{})
	byAPI := map[string]*Class{}
	for _, c := range au.Classes {
		byAPI[c.API] = c
	}
	if c := byAPI["cudaMemcpyAsync"]; c == nil || c.Range != "inner" || c.HostNs != 1_000 || c.Thread != "main" || c.Stream != 7 {
		t.Errorf("async class %+v", c)
	}
	if c := byAPI["cudaMemcpyBatchAsync"]; c == nil || c.Count != 2 || c.HostNs != 400 || c.Range != "outer" {
		t.Errorf("batch class: the call's 400 ns must count once: %+v", c)
	}
	if c := byAPI[""]; c == nil || c.Count != 1 || c.HostNs != 0 || c.APIKind != UnknownAPI {
		t.Errorf("class of the copy without a call %+v", c)
	}

	// Without the trace's duration, the span runs from the first call to
	// the last.
	b := NewAccumulator()
	scan = &capture.CopyScan{}
	hb := b.Handler(scan)
	must(hb.Counts(&records.Counts{Calls: 2, FirstCall: 10, LastCall: 70}))
	if scan.Span != 60 || scan.SpanFrom != capture.SpanAPICalls {
		t.Errorf("span %d from %q", scan.Span, scan.SpanFrom)
	}
}
