package predictions

import (
	"sort"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// The lesson's four predictions.

// Each part's numbers in a source.
var (
	sweepH2D  = NewSlot[*sweepData]("part 1 host-to-device sweep")
	sweepD2H  = NewSlot[*sweepData]("part 1b device-to-host sweep")
	asyncSlot = NewSlot[*asyncData]("part 2 groups")
	kernSlot  = NewSlot[*kernelData]("part 3 launches")
	callsSlot = NewSlot[*callTotals]("prediction 4 call times")
	bytesSlot = NewSlot[*byteTotals]("prediction 4 bytes")
)

// The rows each part adds to a result.
var (
	// CopyRows are part 1's (h2d) and 1b's (d2h) rows, per source.
	CopyRows = RowKey[CopyRow]{Name: "copies"}
	// AsyncRows are part 2's rows.
	AsyncRows = RowKey[AsyncRow]{Name: "async"}
	// KernelRows are part 3's rows.
	KernelRows = RowKey[KernelRow]{Name: "kernels"}
	// CallRows are prediction 4's per-call durations, per source that has
	// them.
	CallRows = RowKey[CallDurations]{Name: "asyncCalls"}
)

func sweepSlot(dir vocab.Direction) *Slot[*sweepData] {
	if dir == vocab.H2D {
		return sweepH2D
	}
	return sweepD2H
}

var part1 = Part{
	ID:    1,
	Topic: "Pinned against pageable copy time",
	Claims: []ClaimSpec{
		{ID: "1.floor",
			Statement: Say("pinned beats pageable at every size (H2D), and at ", Size(floorSize), " pageable costs at least ", Times(FloorRatio), " pinned"),
			Unit:      Say("x (pageable ms / pinned ms at ", Size(floorSize), ")"),
			Compare:   Comparison{Relation: AtLeast, Bound: FloorRatio}, Eval: evalFloor},
		{ID: "1.growth",
			Statement: Say("the pageable/pinned ratio grows with size (Kendall's tau >= ", Plain(GrowthTau), " and largest size's ratio above the smallest's)"),
			Unit:      Say("Kendall's tau (size vs ratio)"),
			Compare:   Comparison{Relation: AtLeast, Bound: GrowthTau}, Eval: evalGrowth},
	},
	APINames: []string{apiMemcpy, apiMemcpyAsync, apiStreamSync, apiDeviceSync},
	Read: func(in *Reading, n *Numbers) {
		for _, dir := range []vocab.Direction{vocab.H2D, vocab.D2H} {
			readSlot(in, n, sweepSlot(dir), func(t *traceCtx) (*sweepData, Why) { return t.part1(dir) },
				func() (*sweepData, Why) { return programSweep(in.Capture.Program, dir, programOf(in.Capture)) })
		}
	},
	Rows: CopyRows,
	AddRows: func(n *Numbers, r *Result) {
		for _, dir := range []vocab.Direction{vocab.H2D, vocab.D2H} {
			sd, _ := sweepSlot(dir).Get(n)
			if sd == nil {
				continue
			}
			for _, src := range sources {
				for _, b := range sd.sizes {
					t := sd.pageable[b]
					if src == vocab.MemPinned {
						t = sd.pinned[b]
					}
					CopyRows.Add(r, CopyRow{From: n.From, Direction: sd.dir, Source: src, Bytes: b,
						Ms: t.ms, GBps: gbps(b, t.ms), Ratio: sd.ratio(b), Runs: t.runs, CorrelationIDs: t.corr})
				}
			}
		}
	},
	Notice: slowerCheck,
	Tables: func(r *Result) []Table { return []Table{copyTable(r, vocab.H2D), copyTable(r, vocab.D2H)} },
	Chart:  bandwidthChart,
}

var part2 = Part{
	ID:    2,
	Topic: "How long cudaMemcpyAsync holds the thread",
	Claims: []ClaimSpec{
		{ID: "2.pageable",
			Statement: Say("the pageable cudaMemcpyAsync call holds the thread for at least ", Percent(PageableShareMin), " of its completion time"),
			Unit:      Say("share (mean call / mean completion)"),
			Compare:   Comparison{Relation: AtLeast, Bound: PageableShareMin},
			Eval:      func(n *Numbers) Outcome { return evalShare(n, vocab.MemPageable) }},
		{ID: "2.pinned",
			Statement: Say("the pinned cudaMemcpyAsync call holds the thread for under ", Percent(PinnedShareMax), " of its completion time"),
			Unit:      Say("share (mean call / mean completion)"),
			Compare:   Comparison{Relation: Below, Bound: PinnedShareMax},
			Eval:      func(n *Numbers) Outcome { return evalShare(n, vocab.MemPinned) }},
	},
	APINames: []string{apiMemcpyAsync, apiStreamSync},
	Read: func(in *Reading, n *Numbers) {
		readSlot(in, n, asyncSlot, (*traceCtx).part2,
			func() (*asyncData, Why) { return programAsync(in.Capture.Program, programOf(in.Capture)) })
	},
	Rows: AsyncRows,
	AddRows: func(n *Numbers, r *Result) {
		ad, _ := asyncSlot.Get(n)
		if ad == nil {
			return
		}
		for _, src := range sources {
			s := ad.side[src]
			AsyncRows.Add(r, AsyncRow{From: n.From, Source: src, Bytes: s.bytes, CallMs: s.callMs,
				CompletionMs: s.completionMs, Share: s.callMs / s.completionMs, Runs: s.runs, CorrelationIDs: s.corr})
		}
	},
	Tables: func(r *Result) []Table { return []Table{asyncTable(r)} },
	Chart:  asyncChart,
}

var part3 = Part{
	ID:    3,
	Topic: "What zero-copy costs a kernel",
	Claims: []ClaimSpec{
		{ID: "3.factor",
			Statement: Say("zero-copy's loss to device-resident is within a factor of ", Count(LossFactor),
				" of resident GB/s / pinned H2D GB/s at ", Size(kernelBytes)),
			Unit:    Say("x (zero-copy ms / resident ms)"),
			Compare: Comparison{Relation: Within, Factor: LossFactor}, Eval: evalFactor},
	},
	APINames: []string{apiLaunchKernel},
	Read: func(in *Reading, n *Numbers) {
		readSlot(in, n, kernSlot, func(t *traceCtx) (*kernelData, Why) { return t.part3(in.Capture.Program) },
			func() (*kernelData, Why) { return programKernels(in.Capture.Program, programOf(in.Capture), in.diags) })
	},
	Rows: KernelRows,
	AddRows: func(n *Numbers, r *Result) {
		kd, _ := kernSlot.Get(n)
		if kd == nil {
			return
		}
		for _, v := range variants {
			t := kd.ms[v]
			KernelRows.Add(r, KernelRow{From: n.From, Variant: v, Bytes: kd.bytes, BytesFrom: kd.bytesFrom,
				MsPerLaunch: t.ms, GBps: kd.gbps(v), Runs: t.runs, CorrelationIDs: t.corr})
		}
	},
	Tables: func(r *Result) []Table { return []Table{kernelTable(r)} },
	Chart:  kernelChart,
}

var part4 = Part{
	ID:    4,
	Topic: "What the capture's API trace shows",
	Claims: []ClaimSpec{
		{ID: "4.calltime",
			Statement: Say("the ", Count(timedRuns), " timed pageable cudaMemcpyAsync calls total at least ", Times(CallTimeRatio),
				" the call time of the ", Count(timedRuns), " pinned ones"),
			Unit:    Say("x (pageable total / pinned total)"),
			Compare: Comparison{Relation: AtLeast, Bound: CallTimeRatio}, Eval: evalCallTime},
		{ID: "4.bytes",
			Statement: Say("both groups of timed cudaMemcpyAsync calls move the same bytes"),
			Unit:      Say("pageable bytes / pinned bytes"),
			Compare:   Comparison{Relation: Equal, Bound: 1}, Control: "bytes", Eval: evalBytes},
	},
	APINames: []string{apiMemcpyAsync},
	Read: func(in *Reading, n *Numbers) {
		if in.From == SourceProgram {
			programCalls(in.Capture, n)
			return
		}
		ad, why := asyncSlot.Get(n)
		if ad == nil {
			callsSlot.Set(n, nil, why)
			bytesSlot.Set(n, nil, why)
			return
		}
		calls, bytes, bytesWhy := in.trace.part4(ad)
		callsSlot.Set(n, calls, nil)
		bytesSlot.Set(n, bytes, bytesWhy)
		if bytes == nil && !in.Capture.Has(records.FactMemcpy) {
			bytesSlot.SetShort(n, NoPerCopyRecords{AddGPUTrace: in.Capture.Format == capture.FormatCSV})
		}
	},
	Rows: CallRows,
	AddRows: func(n *Numbers, r *Result) {
		if ct, _ := callsSlot.Get(n); ct != nil && ct.perCall != nil {
			CallRows.Add(r, *ct.perCall)
		}
	},
	Chart: callsChart,
}

// readSlot fills a part's slot from the source being read: the trace (or
// why there is none to read) or the program's numbers.
func readSlot[T any](in *Reading, n *Numbers, s *Slot[T], trace func(*traceCtx) (T, Why), program func() (T, Why)) {
	var v T
	var why Why
	switch {
	case in.From == SourceProgram:
		v, why = program()
	case in.trace == nil:
		why = in.traceWhy
	default:
		v, why = trace(in.trace)
	}
	s.Set(n, v, why)
}

// slowerCheck warns, from the numbers alone, when a pinned row is slower
// than its pageable row.
func slowerCheck(n *Numbers, diags *diag.List) {
	for _, dir := range []vocab.Direction{vocab.H2D, vocab.D2H} {
		sd, _ := sweepSlot(dir).Get(n)
		if sd == nil {
			continue
		}
		var slow []SlowSize
		for _, b := range sd.sizes {
			if sd.pinned[b].ms > sd.pageable[b].ms {
				slow = append(slow, SlowSize{Bytes: b, PinnedMs: sd.pinned[b].ms, PageableMs: sd.pageable[b].ms})
			}
		}
		if len(slow) > 0 {
			diags.Add(diag.Warning, PinnedSlower{Source: n.From, Dir: sd.dir, Sizes: slow})
		}
	}
}

// tableOf is a table with rows, and whose numbers they are.
func tableOf(t Table, from Source) Table {
	t.From = from
	return t
}

func copyTable(r *Result, dir vocab.Direction) Table {
	t := Table{
		Columns: []Column{{Head: "size"}, {Head: "pageable ms", Right: true}, {Head: "pageable GB/s", Right: true},
			{Head: "pinned ms", Right: true}, {Head: "pinned GB/s", Right: true}, {Head: "pageable/pinned", Right: true}},
		Title:   "Part 1: blocking cudaMemcpy, host to device",
		Missing: "The input has no H2D copy rows.",
	}
	if dir == vocab.D2H {
		t.Title = "Part 1b: blocking cudaMemcpy, device to host (the exercise's sweep)"
		t.Missing = "The input has no D2H copy rows."
	}
	var froms []Source
	rows := CopyRows.Of(r)
	for _, c := range rows {
		if c.Direction == dir {
			froms = append(froms, c.From)
		}
	}
	from := Preferred(froms)
	if from == "" {
		return t
	}
	type pair struct{ pageable, pinned *CopyRow }
	bySize := map[int64]*pair{}
	var sizes []int64
	for i := range rows {
		c := &rows[i]
		if c.From != from || c.Direction != dir {
			continue
		}
		p := bySize[c.Bytes]
		if p == nil {
			p = &pair{}
			bySize[c.Bytes] = p
			sizes = append(sizes, c.Bytes)
		}
		if c.Source == vocab.MemPinned {
			p.pinned = c
		} else {
			p.pageable = c
		}
	}
	sort.Slice(sizes, func(i, j int) bool { return sizes[i] < sizes[j] })
	cells := func(c *CopyRow) (Cell, Cell) {
		if c == nil {
			return Cell{}, Cell{}
		}
		return msCell(c.Ms), gbpsCell(c.GBps)
	}
	for _, b := range sizes {
		p := bySize[b]
		pgMs, pgG := cells(p.pageable)
		pnMs, pnG := cells(p.pinned)
		ratio := 0.0
		if p.pageable != nil {
			ratio = p.pageable.Ratio
		} else if p.pinned != nil {
			ratio = p.pinned.Ratio
		}
		t.Rows = append(t.Rows, []Cell{sizeCell(b), pgMs, pgG, pnMs, pnG, ratioCell(ratio)})
	}
	return tableOf(t, from)
}

func asyncTable(r *Result) Table {
	t := Table{
		Title:   "Part 2: cudaMemcpyAsync on a stream, call vs completion",
		Columns: []Column{{Head: "source"}, {Head: "call (ms)", Right: true}, {Head: "completion (ms)", Right: true}, {Head: "call share", Right: true}},
		Missing: "The input has no part 2 rows.",
	}
	rows := AsyncRows.Of(r)
	from := PreferredOf(rows, func(a AsyncRow) Source { return a.From })
	if from == "" {
		return t
	}
	for _, a := range rows {
		if a.From == from {
			t.Rows = append(t.Rows, []Cell{wordCell(string(a.Source)), msCell(a.CallMs), msCell(a.CompletionMs), shareCell(a.Share)})
		}
	}
	return tableOf(t, from)
}

func kernelTable(r *Result) Table {
	t := Table{
		Title:   "Part 3: the " + kernelName + " kernel, device-resident vs zero-copy",
		Columns: []Column{{Head: "variant"}, {Head: "ms per launch", Right: true}, {Head: "effective GB/s", Right: true}},
		Missing: "The input has no part 3 rows.",
	}
	rows := KernelRows.Of(r)
	from := PreferredOf(rows, func(k KernelRow) Source { return k.From })
	if from == "" {
		return t
	}
	for _, k := range rows {
		if k.From == from {
			t.Rows = append(t.Rows, []Cell{wordCell(string(k.Variant)), msCell(k.MsPerLaunch), gbpsCell(k.GBps)})
		}
	}
	if r.DeviceCopyGBps > 0 {
		t.Notes = append(t.Notes, ScaleNote{GBps: r.DeviceCopyGBps, From: r.DeviceCopyFrom.Source})
	}
	return tableOf(t, from)
}
