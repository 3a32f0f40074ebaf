package report

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/predictions"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// The words of the lesson's evaluation: what each evidence line says
// (factWords), why a source cannot answer (whyWords) and what each of its
// diagnostics noticed (lessonDetailWords).

// design is the bundled program's design, which the words name.
var design = predictions.Design

// sizeName names a byte count as evidence does: "64 MiB", else "N B".
func sizeName(b int64) string {
	if b%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", b>>20)
	}
	return fmt.Sprintf("%d B", b)
}

// sizeList names byte counts, ", " between them.
func sizeList(bs []int64) string {
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = sizeName(b)
	}
	return strings.Join(parts, ", ")
}

// recordsText names a group of records as evidence does: "FILE data rows
// A..B", "corr A..B (N ids)" or "corr A".
func recordsText(r *predictions.Records) string {
	switch {
	case r == nil:
		return "<nil>"
	case r.Rows != nil:
		return fmt.Sprintf("%s data rows %d..%d", r.Table, r.Rows.First, r.Rows.Last)
	case r.Corr == nil || r.Count == 0:
		return "no calls"
	case r.Count == 1:
		return fmt.Sprintf("corr %d", r.Corr.First)
	}
	return fmt.Sprintf("corr %d..%d (%d ids)", r.Corr.First, r.Corr.Last, r.Count)
}

// optRecords is " (records)" where there are records, else "".
func optRecords(r *predictions.Records) string {
	if r == nil {
		return ""
	}
	return " (" + recordsText(r) + ")"
}

// groupName names a group of records: "h2d 1 MiB pageable", "pinned",
// "zero-copy".
func groupName(g predictions.GroupKey) string {
	var parts []string
	if g.Dir != "" {
		parts = append(parts, string(g.Dir))
	}
	if g.Bytes > 0 {
		parts = append(parts, sizeName(g.Bytes))
	}
	if g.Source != "" {
		parts = append(parts, string(g.Source))
	}
	if g.Variant != "" {
		parts = append(parts, string(g.Variant))
	}
	return strings.Join(parts, " ")
}

// callRef names one call: its CSV data row, else its correlation id.
func callRef(c predictions.CallRef) string {
	if c.Row > 0 {
		return fmt.Sprintf("%s data row %d", c.Table, c.Row)
	}
	return fmt.Sprintf("corr %d", c.Corr)
}

// rangeSpan is an NVTX range's span: "[A, B] ns" or "[A ns, open]".
func rangeSpan(r predictions.RangeRef) string {
	if r.Open {
		return fmt.Sprintf("[%d ns, open]", r.Start)
	}
	return fmt.Sprintf("[%d, %d] ns", r.Start, r.End)
}

// rangesText names ranges with their spans, " and " between them.
func rangesText(rs []predictions.RangeRef) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("NVTX range %s %s", r.Name, rangeSpan(r))
	}
	return strings.Join(parts, " and ")
}

// programLabel says where the program's numbers came from.
func programLabel(p predictions.Program) string {
	label := "the program's numbers"
	switch p.Format {
	case capture.FormatTranscript:
		label = "the program's transcript"
	case capture.FormatMeasurements:
		label = "the measurements file"
	}
	if p.File != "" {
		return label + " " + p.File
	}
	return label
}

// ownerText says whose kernel launches part 3 reads.
func ownerText(o predictions.LaunchOwner) string {
	if o.ByCall {
		return "whose cudaLaunchKernel call is on thread " + threadID(o.Thread)
	}
	return fmt.Sprintf("of process %d (no cudaLaunchKernel calls in the input)", o.PID)
}

// hostSide names a copy's host side by its direction.
func hostSide(dir vocab.Direction) string {
	if dir == vocab.H2D {
		return "source"
	}
	return "destination"
}

// groupNotes words part 1 groups: "h2d pageable 1 MiB: 13 copies, the last
// 10 timed" (noun "copy" or "call").
func groupNotes(gs []predictions.GroupNote, noun string) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = fmt.Sprintf("%s %s %s: %s, the last %d timed", g.Dir, g.Source, sizeName(g.Bytes), nounCount(g.N, noun), g.Timed)
	}
	return out
}

// nounCount is n of "copy" or "call", in the form n asks for.
func nounCount(n int, noun string) string {
	if noun == "copy" {
		return counted(n, "copy", "copies")
	}
	return plural(n, noun)
}

// kindCounts words copies set aside by direction: "3 DtoH copies", "1 DtoH
// copy".
func kindCounts(ks []predictions.KindCount) string {
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = counted(k.N, string(k.Kind)+" copy", string(k.Kind)+" copies")
	}
	return strings.Join(parts, ", ")
}

// lessonCounts is "13 of each of 1 MiB, ... (3 warm-up + 10 timed)".
func lessonCounts() string {
	return fmt.Sprintf("%d of each of %s (%d warm-up + %d timed)", design.PerSize, sizeList(design.SweepSizes), design.Warmups, design.Timed)
}

// sortedJoin joins words in their sorted order.
func sortedJoin(words []string) string {
	words = append([]string(nil), words...)
	sort.Strings(words)
	return strings.Join(words, ", ")
}

// evidenceWords is an evidence line's words.
func evidenceWords(e predictions.Evidence) string { return factWords(e.Fact) }

// factWords is what an evidence line says, in words.
func factWords(f predictions.Fact) string {
	switch f := f.(type) {
	case nil:
		return ""
	case predictions.SweepRow:
		s := fmt.Sprintf("%s %s: pageable %.4f ms (%.2f GB/s", f.Dir, sizeName(f.Bytes), f.Pageable.Ms, f.Pageable.GBps)
		if f.Pageable.At != nil {
			s += ", " + recordsText(f.Pageable.At)
		}
		s += fmt.Sprintf("), pinned %.4f ms (%.2f GB/s", f.Pinned.Ms, f.Pinned.GBps)
		if f.Pinned.At != nil {
			s += ", " + recordsText(f.Pinned.At)
		}
		return s + "), ratio " + num(f.Ratio)
	case predictions.NotFaster:
		return "pinned is not faster than pageable at " + sizeList(f.Sizes)
	case predictions.GrowthRatios:
		parts := make([]string, len(f.Ratios))
		for i, r := range f.Ratios {
			parts[i] = sizeName(f.Sizes[i]) + " " + num(r)
		}
		return fmt.Sprintf("h2d pageable/pinned ratios by size: %s (from %s)", strings.Join(parts, ", "), factWords(f.Method))
	case predictions.Tau:
		return fmt.Sprintf("Kendall's tau(size, ratio) = %s; largest size's ratio %s vs smallest's %s", num(f.Tau), num(f.Largest), num(f.Smallest))
	case predictions.Ties:
		return "some ratios tie; a tie counts as a concordant pair"
	case predictions.Share:
		s := fmt.Sprintf("%s: call %.4f ms, completion %.4f ms, share %s", f.Source, f.CallMs, f.CompletionMs, num(f.Share))
		if f.At != nil {
			s += fmt.Sprintf(" (%s, %s)", plural(f.Calls, "call"), recordsText(f.At))
		}
		return s
	case predictions.KernelBytes:
		return fmt.Sprintf("bytes per launch %d, from %s", f.Bytes, kernelBytesFrom(f.From))
	case predictions.KernelTimes:
		return fmt.Sprintf("device-resident %.4f ms per launch = %.1f GB/s%s; zero-copy %.4f ms per launch = %.1f GB/s%s",
			f.Resident.Ms, f.Resident.GBps, optRecords(f.Resident.At), f.ZeroCopy.Ms, f.ZeroCopy.GBps, optRecords(f.ZeroCopy.At))
	case predictions.PinnedRate:
		return fmt.Sprintf("part 1 pinned h2d %s: %.4f ms = %.2f GB/s%s", sizeName(f.Bytes), f.Timed.Ms, f.Timed.GBps, optRecords(f.Timed.At))
	case predictions.Loss:
		lo, hi := span(f.Compare)
		return fmt.Sprintf("predicted loss %.1f / %.2f = %sx; measured loss %.4f / %.4f = %sx; held when %s <= measured <= %s",
			f.ResidentGBps, f.PinnedGBps, num(f.Predicted), f.ZeroCopyMs, f.ResidentMs, num(f.Measured), num(lo), num(hi))
	case predictions.CallTotals:
		s := fmt.Sprintf("pageable total %.4f ms", f.PageableMs)
		if f.PageableN > 0 {
			s += " over " + plural(f.PageableN, "call")
		}
		s += fmt.Sprintf(", pinned total %.4f ms", f.PinnedMs)
		if f.PinnedN > 0 {
			s += " over " + plural(f.PinnedN, "call")
		}
		if f.OfMeans {
			return s + fmt.Sprintf("; the groups differ in size, so the ratio is of the mean call times: %sx", num(f.Ratio))
		}
		return s + fmt.Sprintf(", ratio %sx", num(f.Ratio))
	case predictions.GroupBytes:
		per := ""
		if f.PerCopy {
			per = " per copy"
		}
		return fmt.Sprintf("pageable group %d bytes%s, pinned group %d bytes%s", f.Pageable, per, f.Pinned, per)
	case predictions.ExerciseRatio:
		return fmt.Sprintf("%s %s pageable %.4f ms / pinned %.4f ms = %s", f.Dir, sizeName(f.Bytes), f.PageableMs, f.PinnedMs, num(f.Ratio))
	case predictions.ExerciseBoth:
		return fmt.Sprintf("h2d ratio %s, d2h ratio %s (%s)", num(f.H2D), num(f.D2H), f.Answer)
	case predictions.ScaleNote:
		return fmt.Sprintf("For scale: a device-to-device cudaMemcpy in the same run moved %s GB/s (%s).", gbpsText(f.GBps), f.From)
	case predictions.Quantity:
		s := wordsText(f.What) + ": " + num(f.Value)
		if u := wordsText(f.Unit); u != "" {
			s += " " + u
		}
		return s
	case predictions.DeviceCopy:
		return fmt.Sprintf("device-to-device memcpy records of the cudaMemcpy calls in NVTX range d2d-reference, %s, last %d of %d (%s), mean GPU time %.4f ms, 2 x bytes / time",
			sizeName(f.Bytes), f.Timed, f.Of, recordsText(f.At), f.Ms)
	}
	return methodWords(f)
}

// kernelBytesFrom says where part 3's bytes per launch came from.
func kernelBytesFrom(k predictions.KernelBytesFrom) string {
	switch {
	case k.Given:
		return fmt.Sprintf("the program's numbers: %d bytes read + written per launch (%s row)", k.Bytes, k.Variant)
	case k.Implied:
		return fmt.Sprintf("the program's numbers: %s row's GB/s x ms = %.0f bytes per launch, taken as %s", k.Variant, k.ImpliedBytes, sizeName(k.Bytes))
	}
	half := sizeName(k.Bytes / 2)
	return fmt.Sprintf("the lesson's design: %s read + %s written per launch (no program numbers give it)", half, half)
}

// methodWords says how a part's groups were found.
func methodWords(f predictions.Fact) string {
	switch f := f.(type) {
	case predictions.SweepByRanges:
		var s string
		if f.Shaped {
			s = fmt.Sprintf("cudaMemcpy API durations (%s) on thread %s in %s; size and direction from %s by correlation id; %d per size (%d warm-up + %d timed), the last %d averaged",
				f.APITable, threadID(f.Thread), rangesText(f.Ranges), f.CopyTable, design.PerSize, design.Warmups, design.Timed, design.Timed)
		} else {
			rule := fmt.Sprintf("the first %d of each size taken as warm-ups (the lesson's count), at least one timed", design.Warmups)
			if f.FromProgram {
				rule = "warm-ups = copies per size minus the timed runs the program's numbers report"
			}
			s = fmt.Sprintf("copy durations (%s) on thread %s in %s; size and direction from %s by correlation id; %s",
				f.APITable, threadID(f.Thread), rangesText(f.Ranges), f.CopyTable, rule)
		}
		var notes []string
		for _, c := range f.CopySync {
			notes = append(notes, fmt.Sprintf("%s: %s made as cudaMemcpyAsync + synchronize, timed from the call's start to the synchronize's end", c.Range, counted(c.N, "copy", "copies")))
		}
		notes = append(notes, groupNotes(f.Groups, "copy")...)
		if len(notes) > 0 {
			s += "; " + strings.Join(notes, "; ")
		}
		return s
	case predictions.SweepByRuns:
		var s string
		if f.Shaped {
			s = fmt.Sprintf("cudaMemcpy API durations (%s) on thread %s, found without NVTX as runs of %d consecutive calls with the same direction, host memory kind and size (%s by correlation id); the last %d of each run averaged",
				f.APITable, threadID(f.Thread), design.PerSize, f.CopyTable, design.Timed)
		} else {
			s = fmt.Sprintf("cudaMemcpy API durations (%s) on thread %s, found without NVTX as runs of more than %d consecutive calls with the same direction, host memory kind and size (%s by correlation id); %s",
				f.APITable, threadID(f.Thread), design.Warmups, f.CopyTable, strings.Join(groupNotes(f.Runs, "call"), "; "))
		}
		if f.NoRanges != "" {
			s += fmt.Sprintf("; thread %s has no NVTX ranges %s-pageable/%s-pinned", threadID(f.Thread), f.NoRanges, f.NoRanges)
		}
		return s
	case predictions.ProgramSweep:
		s := fmt.Sprintf("%s, %s rows (mean ms per copy)", programLabel(f.Program), f.Dir)
		if len(f.Lone) > 0 {
			names := make([]string, len(f.Lone))
			for i, b := range f.Lone {
				names[i] = sizeName(b)
			}
			s += "; sizes with only one source left out: " + sortedJoin(names)
		}
		return s
	case predictions.AsyncMethod:
		s := methodWords(f.Groups) + fmt.Sprintf(" (%s); call = the call's duration, completion = end of the next cudaStreamSynchronize on the thread minus the call's start", f.APITable)
		if f.WithCopies {
			return s + fmt.Sprintf("; direction, host memory kind and bytes from %s by correlation id", f.CopyTable)
		}
		return s + "; no copy records, so memory kinds are not confirmed"
	case predictions.AsyncByRanges:
		if f.Shaped {
			return fmt.Sprintf("the %d cudaMemcpyAsync calls in %s", design.Timed, rangesText(f.Ranges))
		}
		return fmt.Sprintf("the cudaMemcpyAsync calls in %s (%d and %d calls)", rangesText(f.Ranges), f.Pageable, f.Pinned)
	case predictions.AsyncByCopies:
		parts := make([]string, len(f.Groups))
		for i, g := range f.Groups {
			parts[i] = fmt.Sprintf("%d %s (%d warm-up)", g.N, g.Source, g.Warm)
		}
		return fmt.Sprintf("no NVTX ranges: thread %s's host-to-device cudaMemcpyAsync calls of %s, split by their copies' host memory kind (%s by correlation id), in order: %s",
			threadID(f.Thread), sizeName(f.Bytes), f.CopyTable, strings.Join(parts, ", "))
	case predictions.AsyncByOrder:
		n := design.AsyncPerSource
		return fmt.Sprintf("no NVTX ranges: the %d cudaMemcpyAsync calls on thread %s in order, calls 2-%d pageable and %d-%d pinned (calls 1 and %d are warm-ups)",
			design.AsyncTotal, threadID(f.Thread), n, n+2, design.AsyncTotal, n+1)
	case predictions.ProgramAsync:
		return programLabel(f.Program) + ", part 2 rows (host-clock means)"
	case predictions.KernelsByRanges:
		if f.Shaped {
			return fmt.Sprintf("%s kernel durations (%s) %s in %s, %d each, the last %d averaged",
				design.Kernel, f.KernelTable, ownerText(f.Owner), rangesText(f.Ranges), design.LaunchesPerVariant-1, design.Timed)
		}
		names := make([]string, len(f.Groups))
		for i, g := range f.Groups {
			names[i] = fmt.Sprintf("%s: %d x %s, the last %d timed", g.Range, g.N, g.Kernel, g.Timed)
		}
		return fmt.Sprintf("kernel durations (%s) %s in %s, the range's most launched kernel (%s)",
			f.KernelTable, ownerText(f.Owner), rangesText(f.Ranges), strings.Join(names, "; "))
	case predictions.KernelsByOrder:
		n, w := design.LaunchesPerVariant, design.Warmups
		return fmt.Sprintf("no NVTX ranges: the %d %s launches (%s) %s in order, launches %d-%d device-resident and %d-%d zero-copy (each variant: 1 gate, %d warm-up, %d timed)",
			design.LaunchTotal, design.Kernel, f.KernelTable, ownerText(f.Owner), 2+w, n, n+2+w, design.LaunchTotal, w, design.Timed)
	case predictions.ProgramKernels:
		return programLabel(f.Program) + ", part 3 rows (ms per launch)"
	case predictions.CallsMethod:
		return fmt.Sprintf("%s durations of the timed cudaMemcpyAsync calls: pageable %s, pinned %s; groups: %s",
			f.APITable, recordsText(f.Pageable), recordsText(f.Pinned), methodWords(f.Groups))
	case predictions.BytesMethod:
		differ := ""
		if f.PerCopy {
			differ = "the groups differ in size, so the bytes per copy are compared; "
		}
		return fmt.Sprintf("%s bytes of the copies correlated with the timed calls: pageable %d x %d B (%s), pinned %d x %d B (%s); %sgroups: %s",
			f.CopyTable, f.PageableN, f.PageableBytes, recordsText(f.Pageable), f.PinnedN, f.PinnedBytes, recordsText(f.Pinned), differ, methodWords(f.Groups))
	case predictions.ProgramCalls:
		return programLabel(f.Program) + ", asyncCalls: total call time of the timed cudaMemcpyAsync calls as read from a trace"
	case predictions.ProgramBytes:
		return programLabel(f.Program) + ", asyncCalls: bytes moved per group"
	}
	// A fact without words of its own still shows its values.
	return fmt.Sprintf("%+v", f)
}

// sourceWhys joins each source's reason: "trace: ...; program: ...".
func sourceWhys(ws []predictions.SourceWhy) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		if w.Source == "" {
			parts[i] = whyWords(w.Why)
		} else {
			parts[i] = string(w.Source) + ": " + whyWords(w.Why)
		}
	}
	return strings.Join(parts, "; ")
}

// uncheckedWords is a control the input could not check, in words:
// "bytes unchecked: no per-copy records; add cuda_gpu_trace".
func uncheckedWords(u predictions.Unchecked) string {
	why := sourceWhys(u.Whole)
	if u.Why != nil {
		why = whyWords(u.Why)
	}
	return u.Control + " unchecked: " + why
}

// whyWords is why a source cannot answer, in words.
func whyWords(w predictions.Why) string {
	a := design.AsyncPerSource
	switch w := w.(type) {
	case nil:
		return ""
	case predictions.NoSources:
		return "the input holds neither a trace nor the program's numbers"
	case predictions.NoAPITrace:
		return "no per-call API trace: " + w.Lacks
	case predictions.NoCalls:
		return "the API trace holds none of the lesson's CUDA calls"
	case predictions.NoTopSize:
		return fmt.Sprintf("no %s host-to-device row for both sources (sizes: %s)", sizeName(w.Top), sizeList(w.Sizes))
	case predictions.TooFewSizes:
		return "growth needs at least two sizes; found " + sizeList(w.Sizes)
	case predictions.NeedsPinnedRate:
		return "the prediction prices zero-copy against part 1's pinned H2D rate, which is unavailable: " + whyWords(w.Why)
	case predictions.NoPinnedAt:
		return fmt.Sprintf("no pinned host-to-device row at %s (the kernel's size)", sizeName(w.Bytes))
	case predictions.PinnedCallsZero:
		return "the pinned group's total call time is zero"
	case predictions.NoExerciseRows:
		return fmt.Sprintf("no %s row for both sources in both directions", sizeName(predictions.ExerciseBytes))
	case predictions.PinnedNotPinned:
		return fmt.Sprintf("the trace shows the %s copies from pageable memory (pinned-source-pageable): "+
			"the pinned buffer is not pinned, so every source compares pageable with pageable", strings.Join(w.Groups, " and "))
	case predictions.NoRange:
		return fmt.Sprintf("no NVTX range %q on thread %s", w.Range, threadID(w.Thread))
	case predictions.RangeCount:
		return fmt.Sprintf("found %s of NVTX range %q on thread %s, expected 1", plural(w.N, "instance"), w.Range, threadID(w.Thread))
	case predictions.RangesOverlap:
		return fmt.Sprintf("NVTX ranges %q %s and %q %s overlap on thread %s, so which calls belong to which group is ambiguous",
			w.A.Name, rangeSpan(w.A), w.B.Name, rangeSpan(w.B), threadID(w.Thread))
	case predictions.NoCopyRecords:
		return "the trace has no per-copy records, so no copy's size or direction is known (" + w.Lacks + ")"
	case predictions.NoCorrelation:
		return "cudaMemcpy calls cannot be matched with their copies (" + w.Lacks + ")"
	case predictions.NoMemoryKinds:
		return "without NVTX ranges the pageable and pinned groups are told apart by the copies' memory kinds, which this trace lacks (" + w.Lacks + ")"
	case predictions.NoKernelRecords:
		return "no per-launch kernel records (" + w.Lacks + ")"
	case predictions.CallWithoutCopy:
		return fmt.Sprintf("%s %s in NVTX range %q has no copy record in %s", w.Call.Name, callRef(w.Call), w.Range, w.CopyTable)
	case predictions.AsyncWithoutSync:
		return fmt.Sprintf("cudaMemcpyAsync %s in NVTX range %q is not followed by a synchronize before the next copy, so when its copy was done is not known",
			callRef(w.Call), w.Range)
	case predictions.NoSharedSize:
		return fmt.Sprintf("NVTX ranges %s-pageable and %s-pinned share no copy size", w.Dir, w.Dir)
	case predictions.MixedHosts:
		return fmt.Sprintf("NVTX range %q holds %s copies of %s from host memory of %d kinds, so its group is ambiguous", w.Range, w.Kind, sizeName(w.Bytes), w.Kinds)
	case predictions.CopiesOnGPUs:
		what := "the cudaMemcpyAsync groups' copies"
		if w.Dir != "" {
			what = fmt.Sprintf("the %s sweep's copies", w.Dir)
		}
		return fmt.Sprintf("%s ran on %d GPUs (%s, by %s), so their times are not one GPU's: profile the program with one GPU visible (CUDA_VISIBLE_DEVICES)",
			what, len(w.Devices), devicesWords(w.Devices, "copy", "copies"), w.CopyTable)
	case predictions.KernelsOnGPUs:
		return fmt.Sprintf("the timed kernels ran on %d GPUs (%s, by %s), so the two variants' times are not one GPU's: profile the program with one GPU visible (CUDA_VISIBLE_DEVICES)",
			len(w.Devices), devicesWords(w.Devices, "kernel", "kernels"), w.KernelTable)
	case predictions.RangeHoldsNoCopies:
		return fmt.Sprintf("NVTX range %q holds no %s cudaMemcpy or cudaMemcpyAsync copies on thread %s", w.Range, w.Kind, threadID(w.Thread))
	case predictions.MemcpyWithoutCopy:
		return fmt.Sprintf("cudaMemcpy %s on thread %s has no copy record in %s", callRef(w.Call), threadID(w.Thread), w.CopyTable)
	case predictions.AllPageable:
		return fmt.Sprintf("the %s sweep's copies are all pageable (two runs per size, none pinned), so without NVTX ranges its pageable and pinned groups cannot be told apart", w.Dir)
	case predictions.NoRuns:
		return fmt.Sprintf("found no size with exactly one run of more than %d consecutive %s cudaMemcpy calls from pageable and one from pinned memory on thread %s",
			design.Warmups, w.Kind, threadID(w.Thread))
	case predictions.NoStreamSync:
		return fmt.Sprintf("no cudaStreamSynchronize calls on thread %s, so no copy's completion is known", threadID(w.Thread))
	case predictions.NoFollowingSync:
		return fmt.Sprintf("cudaMemcpyAsync %s has no following cudaStreamSynchronize on thread %s", callRef(w.Call), threadID(w.Thread))
	case predictions.AsyncBeforeSync:
		return fmt.Sprintf("cudaMemcpyAsync %s is followed by another cudaMemcpyAsync (%s) before its cudaStreamSynchronize", callRef(w.Call), callRef(w.Next))
	case predictions.AsyncWithoutCopy:
		return fmt.Sprintf("cudaMemcpyAsync %s has no copy record in %s", callRef(w.Call), w.CopyTable)
	case predictions.AsyncNotHtoD:
		return fmt.Sprintf("cudaMemcpyAsync %s copies %s; the program's are host-to-device", callRef(w.Call), w.Kind)
	case predictions.AsyncCount:
		return fmt.Sprintf("found %s on thread %s and no NVTX ranges async-pageable/async-pinned; the program makes exactly %d (%d pageable, then %d pinned, each 1 warm-up + %d timed), so the groups cannot be told apart",
			plural(w.N, "cudaMemcpyAsync call"), threadID(w.Thread), design.AsyncTotal, a, a, design.Timed)
	case predictions.AsyncMixedHosts:
		return fmt.Sprintf("NVTX range %q holds cudaMemcpyAsync copies from host memory of %d kinds, so its group is ambiguous", w.Range, w.Kinds)
	case predictions.RangeHoldsNoAsync:
		return fmt.Sprintf("NVTX range %q holds no host-to-device cudaMemcpyAsync calls on thread %s", w.Range, threadID(w.Thread))
	case predictions.NoAsyncPair:
		return fmt.Sprintf("no NVTX ranges async-pageable/async-pinned, and thread %s's %s include no size copied host-to-device from both pageable and pinned memory, so the groups cannot be found",
			threadID(w.Thread), plural(w.N, "cudaMemcpyAsync call"))
	case predictions.SummaryBytesOnly:
		return fmt.Sprintf("no per-copy records; cuda_gpu_mem_size_sum gives only totals per copy kind (host-to-device: %s, %.3f MB), which mix part 2's copies with part 1's and part 3's, so the two groups' bytes cannot be separated",
			counted(int(w.Count), "copy", "copies"), w.TotalMB)
	case predictions.NoBytes:
		return "no per-copy records and no per-kind byte totals in the input"
	case predictions.LaunchCount:
		return fmt.Sprintf("found %s %s and no NVTX ranges kernel-device-resident/kernel-zero-copy; the program makes exactly %d (per variant: 1 gate, %d warm-up, %d timed)",
			counted(w.N, design.Kernel+" launch", design.Kernel+" launches"), ownerText(w.Owner), design.LaunchTotal, design.Warmups, design.Timed)
	case predictions.ImpossibleKernelRate:
		return fmt.Sprintf("the %s kernels in %s move %d bytes in %.4g ms a launch: %s: a kernel's time in the trace is wrong",
			w.Variant, w.KernelTable, w.Bytes, w.Ms, w.Reason)
	case predictions.ZeroKernelTime:
		verb := "end"
		if w.Count == 1 {
			verb = "ends"
		}
		return fmt.Sprintf("%s of the timed %s kernels in %s %s when it starts (the first: correlation id %d): no kernel runs in no time, so the trace's kernel times are damaged (%s)",
			counted(w.Count, "launch", "launches"), w.Variant, w.KernelTable, verb, w.Corr, nsysdb.ExportHint)
	case predictions.RangeHoldsNoLaunches:
		return fmt.Sprintf("NVTX range %q holds no kernel launches %s", w.Range, ownerText(w.Owner))
	case predictions.ProgramBadSource:
		return fmt.Sprintf("%s has a %s copy row with source %q; expected pageable or pinned", programLabel(w.Program), w.Dir, w.Source)
	case predictions.ProgramTwoRows:
		return fmt.Sprintf("%s has two %s %s rows for %s", programLabel(w.Program), w.Dir, w.Source, sizeName(w.Bytes))
	case predictions.ProgramNoTime:
		return fmt.Sprintf("%s has a %s %s row for %s with no time", programLabel(w.Program), w.Dir, w.Source, sizeName(w.Bytes))
	case predictions.ProgramNoCopies:
		what := "host-to-device (part 1)"
		if w.Dir == vocab.D2H {
			what = "device-to-host (part 1b, the exercise's sweep)"
		}
		return fmt.Sprintf("%s has no %s copy rows", programLabel(w.Program), what)
	case predictions.ProgramNoPair:
		return fmt.Sprintf("%s has no %s size with both a pageable and a pinned row", programLabel(w.Program), w.Dir)
	case predictions.ProgramTwoAsync:
		return fmt.Sprintf("%s has two part 2 rows for %s", programLabel(w.Program), w.Source)
	case predictions.ProgramNoAsync:
		return fmt.Sprintf("%s has no part 2 row for the %s source", programLabel(w.Program), w.Source)
	case predictions.ProgramNoCompletion:
		return fmt.Sprintf("%s gives the %s source no completion time", programLabel(w.Program), w.Source)
	case predictions.ProgramTwoKernels:
		return fmt.Sprintf("%s has two part 3 rows for %s", programLabel(w.Program), w.Variant)
	case predictions.ProgramNoKernel:
		return fmt.Sprintf("%s has no part 3 row for %s", programLabel(w.Program), w.Variant)
	case predictions.ProgramNoLaunchTime:
		return fmt.Sprintf("%s gives %s no time per launch", programLabel(w.Program), w.Variant)
	case predictions.ProgramNoCallTotals:
		s := programLabel(w.Program) + " has no call-time totals from a trace (asyncCalls); the program's own part 2 call times are host-clock means, not cuda_api_trace durations"
		if w.MeanRatio != nil {
			s += fmt.Sprintf(" (for reference, its mean call times give %.1fx)", *w.MeanRatio)
		}
		return s
	case predictions.ProgramNoGroupBytes:
		return programLabel(w.Program) + " gives no bytes per group of cudaMemcpyAsync calls (asyncCalls.pageableBytes/pinnedBytes)"
	case predictions.ProgramAskedBytes:
		return programLabel(w.Program) + " reports the bytes each copy was asked to move, not what the copies moved (no asyncCalls bytes)"
	case predictions.GateUntrusted:
		return fmt.Sprintf("%s: the program's correctness gate %q failed (%s), so its timings cannot decide", programLabel(w.Program), w.Name, w.Detail)
	case predictions.NoPerCopyRecords:
		if w.AddGPUTrace {
			return "no per-copy records; add cuda_gpu_trace"
		}
		return "no per-copy records"
	case predictions.ProgramGivesNoGroupBytes:
		return "the program's numbers give no bytes per group"
	}
	return fmt.Sprintf("%+v", w)
}

// notPinned is the advice every diagnostic of an unpinned "pinned" buffer
// gives: said once where several are shown together.
const notPinned = "the pinned buffer probably is not pinned: check that it came from cudaMallocHost and that its return value was checked; the verdicts are what its copies measured"

// lessonAdvice is what to do about a diagnostic of the evaluation, "" for
// one that needs nothing done.
func lessonAdvice(d any) string {
	switch d.(type) {
	case predictions.PinnedSlower, predictions.PinnedPageable, predictions.PinnedPageableRuns:
		return notPinned
	}
	return ""
}

// lessonDetailWords is what a diagnostic of the evaluation noticed, in
// words; ok is false for a detail that is not the evaluation's.
func lessonDetailWords(d any) (string, bool) {
	var s string
	switch d := d.(type) {
	case predictions.SiblingSetAside:
		s = fmt.Sprintf("%s, beside the capture, was set aside: it is not this program's output (%s); the verdicts come from the capture without it", d.Path, d.Reason)
	case predictions.SourcesDisagree:
		s = fmt.Sprintf("%s: the %s says %s (%.4g) but the %s says %s (%.4g); the %s decides",
			d.Claim, d.Decided, d.DecidedVerdict, d.DecidedMeasured, d.Other, d.OtherVerdict, d.OtherMeasured, d.Decided)
	case predictions.PinnedSlower:
		parts := make([]string, len(d.Sizes))
		for i, z := range d.Sizes {
			parts[i] = fmt.Sprintf("%s (pinned %.4f ms, pageable %.4f ms)", sizeName(z.Bytes), z.PinnedMs, z.PageableMs)
		}
		s = fmt.Sprintf("%s: %s pinned copies are slower than pageable at %s", d.Source, d.Dir, strings.Join(parts, ", "))
	case predictions.OtherThreads:
		others := make([]string, len(d.Others))
		for i, o := range d.Others {
			others[i] = fmt.Sprintf("%s (%s)", threadID(o.Thread), plural(o.Calls, "call"))
		}
		s = fmt.Sprintf("read thread %s (%s, %s); ignored CUDA calls on %s: %s",
			threadID(vocab.Thread{PID: d.Read.PID, TID: d.Read.TID}), d.Read.Why(), plural(d.Read.Calls, "call"), plural(len(d.Others), "other thread"), strings.Join(others, ", "))
	case predictions.OpenRange:
		s = fmt.Sprintf("NVTX range %q (start %d ns) was never closed: the capture ended inside it, so it is taken to run to the end; its counts decide whether it is usable", d.Range, d.Start)
	case predictions.RangeOrder:
		s = fmt.Sprintf("NVTX range %q comes before %q; the lesson measures pageable first", d.Pinned, d.Pageable)
	case predictions.RangeShape:
		parts := make([]string, len(d.Counts))
		for i, c := range d.Counts {
			parts[i] = fmt.Sprintf("%d x %s", c.N, sizeName(c.Bytes))
		}
		s = fmt.Sprintf("NVTX range %q holds %s; the lesson makes %s", d.Range, strings.Join(parts, ", "), lessonCounts())
	case predictions.RunsShape:
		s = fmt.Sprintf("without NVTX ranges, the %s sweep's runs of cudaMemcpy calls are: %s; the lesson makes %s",
			d.Dir, strings.Join(groupNotes(d.Runs, "call"), "; "), lessonCounts())
	case predictions.AsyncRangeCount:
		s = fmt.Sprintf("NVTX range %q holds %s on thread %s; the lesson times %d; the group is the %d it holds",
			d.Range, plural(d.N, "cudaMemcpyAsync call"), threadID(d.Thread), design.Timed, d.N)
	case predictions.AsyncGroupShape:
		s = fmt.Sprintf("thread %s makes %s of %s from %s memory; the lesson makes %d (1 warm-up + %d timed)",
			threadID(d.Thread), plural(d.N, "host-to-device cudaMemcpyAsync call"), sizeName(d.Bytes), d.Source, design.AsyncPerSource, design.Timed)
	case predictions.KernelRangeShape:
		s = fmt.Sprintf("NVTX range %q holds %s of kernel %s; the lesson makes %d of %s (%d warm-up + %d timed); the last %d are timed",
			d.Range, counted(d.N, "launch", "launches"), d.Kernel, design.LaunchesPerVariant-1, design.Kernel, design.Warmups, design.Timed, d.Timed)
	case predictions.PinnedPageable:
		s = fmt.Sprintf("the %s group's copies have a pageable host %s (%s, corr %d)",
			d.Group, hostSide(d.Dir), d.CopyTable, d.Corr)
	case predictions.PinnedPageableRuns:
		s = fmt.Sprintf("the %s sweep has two runs of pageable copies per size and no pinned ones", d.Dir)
	case predictions.MemoryKindMismatch:
		s = fmt.Sprintf("the %s group's copies have host %s kind %q (%s, corr %d), not %q", d.Group, hostSide(d.Dir), d.Host, d.CopyTable, d.Corr, d.Want)
	case predictions.RangeAlsoHolds:
		s = fmt.Sprintf("NVTX range %q also holds %s; set aside: the group is its %s copies", d.Range, kindCounts(d.Aside), d.Kind)
	case predictions.AsyncRangeAlsoHolds:
		s = fmt.Sprintf("NVTX range %q also holds %s; set aside: part 2's copies are host-to-device", d.Range, kindCounts(d.Aside))
	case predictions.OneSourceSizes:
		words := make([]string, len(d.Lone))
		for i, l := range d.Lone {
			words[i] = string(l.Source) + " " + sizeName(l.Bytes)
		}
		s = fmt.Sprintf("the %s sweep has sizes with copies from one source only, set aside: %s", d.Dir, sortedJoin(words))
	case predictions.RunSizesAside:
		words := make([]string, len(d.Sizes))
		for i, z := range d.Sizes {
			words[i] = fmt.Sprintf("%s (%d pageable and %d pinned runs)", sizeName(z.Bytes), z.Pageable, z.Pinned)
			if z.Pageable > 1 || z.Pinned > 1 {
				words[i] = fmt.Sprintf("%s (%d pageable and %d pinned runs: ambiguous)", sizeName(z.Bytes), z.Pageable, z.Pinned)
			}
		}
		s = fmt.Sprintf("without NVTX ranges, the %s sweep's sizes without exactly one run of each source are set aside: %s", d.Dir, sortedJoin(words))
	case predictions.OtherKernels:
		aside := make([]string, len(d.Aside))
		for i, k := range d.Aside {
			aside[i] = fmt.Sprintf("%d x %s", k.N, k.Kernel)
		}
		s = fmt.Sprintf("NVTX range %q launches other kernels besides %d x %s, set aside: %s", d.Range, d.N, d.Kernel, strings.Join(aside, ", "))
	case predictions.CopySyncRange:
		s = fmt.Sprintf("NVTX range %q holds %s each followed by a synchronize, not blocking cudaMemcpy calls: each such copy is timed from the call's start to the end of the synchronize",
			d.Range, plural(d.N, "cudaMemcpyAsync call"))
	case predictions.AsyncOutside:
		s = fmt.Sprintf("thread %s makes %s, %d of them outside NVTX ranges async-pageable/async-pinned; the lesson takes part 2's %d (1 warm-up + %d timed per source) to be the program's only ones; the groups are what the ranges hold",
			threadID(d.Thread), plural(d.N, "cudaMemcpyAsync call"), d.Outside, design.AsyncTotal, design.Timed)
	case predictions.AsyncAside:
		s = fmt.Sprintf("thread %s makes %s; %d of them are not host-to-device copies of %s from pageable or pinned memory and are set aside (the lesson takes part 2's copies to be the program's only ones)",
			threadID(d.Thread), plural(d.N, "cudaMemcpyAsync call"), d.Aside, sizeName(d.Bytes))
	case predictions.GateFailed:
		s = fmt.Sprintf("the program's correctness gate %q failed: %s; its timings are not trustworthy", d.Name, d.Detail)
	case predictions.KernelBytesMismatch:
		s = fmt.Sprintf("the program's %s row gives %d bytes per launch, but its GB/s x ms imply %.0f bytes", d.Variant, d.Bytes, d.Implied)
	default:
		return "", false
	}
	return s, true
}

// deviceCopyFrom says where the device-to-device bandwidth came from:
// "trace: device-to-device memcpy records ..." or "program: ...".
func deviceCopyFrom(d *predictions.DeviceCopyFrom) string {
	switch {
	case d == nil:
		return ""
	case d.Trace != nil:
		return string(d.Source) + ": " + factWords(*d.Trace)
	}
	return string(d.Source) + ": " + programLabel(d.Program) + ", deviceCopyGBps"
}

// exerciseRule states how the exercise's answer is decided.
func exerciseRule() string {
	return fmt.Sprintf("the direction with the larger pageable/pinned ratio at %s; %q when the larger ratio is at most %.0f%% above the smaller (max/min <= %.2f)",
		sizeName(predictions.ExerciseBytes), predictions.GainSame, 100*predictions.SameAsTolerance, 1+predictions.SameAsTolerance)
}

// numberWords writes small whole numbers as words, as the lesson does.
var numberWords = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"}

// wordsText renders the lesson's text with its typed values.
func wordsText(w predictions.Words) string {
	var b strings.Builder
	for _, p := range w {
		switch p := p.(type) {
		case predictions.Text:
			b.WriteString(string(p))
		case predictions.Size:
			b.WriteString(sizeName(int64(p)))
		case predictions.Times:
			b.WriteString(strconv.FormatFloat(float64(p), 'g', -1, 64) + "x")
		case predictions.Percent:
			b.WriteString(strconv.FormatFloat(100*float64(p), 'g', 6, 64) + "%")
		case predictions.Plain:
			b.WriteString(strconv.FormatFloat(float64(p), 'g', -1, 64))
		case predictions.From:
			b.WriteString(sourceWords(predictions.Source(p)))
		case predictions.Ms:
			b.WriteString(msText(float64(p)))
		case predictions.Fixed:
			b.WriteString(strconv.FormatFloat(p.X, 'f', p.Places, 64))
		case predictions.Pct:
			b.WriteString(pct(float64(p)))
		case predictions.Int:
			b.WriteString(strconv.Itoa(int(p)))
		case predictions.Count:
			if int(p) >= 0 && int(p) < len(numberWords) {
				b.WriteString(numberWords[p])
			} else {
				b.WriteString(strconv.Itoa(int(p)))
			}
		default:
			fmt.Fprintf(&b, "%v", p)
		}
	}
	return b.String()
}

// topicOf is what a prediction is about, as the lesson titles it.
func topicOf(id int) string {
	if p := predictions.Lesson.Part(id); p != nil {
		return p.Topic
	}
	return fmt.Sprintf("prediction %d", id)
}

// cellText writes one table cell.
func cellText(c predictions.Cell) string {
	switch c.Kind {
	case predictions.CellWord:
		return c.Word
	case predictions.CellSize:
		return sizeLabel(int64(c.X))
	case predictions.CellMs:
		return msText(c.X)
	case predictions.CellGBps:
		return gbpsText(c.X)
	case predictions.CellRatio:
		return ratioText(c.X)
	case predictions.CellShare:
		return pct(c.X)
	}
	return "–"
}

// tableViewOf is a part's table as the reports show it.
func tableViewOf(t predictions.Table) tableView {
	v := tableView{Title: t.Title, Missing: t.Missing}
	for _, c := range t.Columns {
		v.Head = append(v.Head, c.Head)
		v.Right = append(v.Right, c.Right)
	}
	for _, row := range t.Rows {
		cells := make([]string, len(row))
		for i, c := range row {
			cells[i] = cellText(c)
		}
		v.Rows = append(v.Rows, cells)
	}
	if t.From != "" {
		v.Note = tableNote(t.From)
		for _, n := range t.Notes {
			v.Note += " " + noteWords(n)
		}
	}
	return v
}

// noteWords is a table's note in words.
func noteWords(f predictions.Fact) string { return factWords(f) }

// devicesWords counts the records on each device: "device 0: 129 copies,
// device 1: 1 copy".
func devicesWords(ds []predictions.DeviceCount, one, many string) string {
	on := make([]string, len(ds))
	for i, d := range ds {
		on[i] = fmt.Sprintf("device %d: %s", d.Device, counted(d.N, one, many))
	}
	return strings.Join(on, ", ")
}
