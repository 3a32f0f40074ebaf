package report

import (
	"fmt"
	"strings"

	"github.com/nsyscheck/nsyscheck/coverage"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/framework"
	"github.com/nsyscheck/nsyscheck/internal/words"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// The words of what a capture cannot show (package coverage): what nsys
// says of its capture, graphs traced whole or per node, unified-memory
// migrations, a framework's staging; and the "none"s every renderer says
// only where the capture could have shown them.

// coverageWords is what a coverage diagnostic noticed, in words; ok is
// false for a detail that is not coverage's.
func coverageWords(d diag.Detail) (string, bool) {
	switch d := d.(type) {
	case coverage.NsysMessages:
		parts := make([]string, len(d.Messages))
		for i, m := range d.Messages {
			first := m.First
			if m.FirstDetail != "" {
				first += ": " + m.FirstDetail
			}
			parts[i] = fmt.Sprintf("%s (the first: %q)", plural(m.Count, m.Severity), first)
		}
		return "nsys wrote " + words.List(parts) + " about this capture", true
	case coverage.Incomplete:
		return incompleteWords(d), true
	case coverage.NotTraced:
		return "nsys did not trace CUDA in this capture: it cannot show a copy, a kernel or a CUDA call, and their absence here says nothing of the run", true
	case coverage.GraphsWhole:
		graphs := ""
		if d.Graphs > 0 {
			graphs = " of " + plural(d.Graphs, "graph")
		}
		return fmt.Sprintf("%s%s (%s on the GPU) ran copies and kernels the capture does not break down: nsys traced each launch whole "+
			"(--cuda-graph-trace=graph, its default), so whatever the graphs copied or ran is in no copy or kernel counted here",
			counted(int(d.Launches), "CUDA graph launch", "CUDA graph launches"), graphs, ns(d.GPUNs)), true
	case coverage.GraphNodes:
		return fmt.Sprintf("%s (%s) ran as nodes of %s, traced node by node: they count under their launch (API kind graph, its host time once a launch); "+
			"the prediction keeps them as they are, since pinning a graph's buffer changes the graph, not a copy call",
			counted(int(d.Copies), "copy", "copies"), formatMB(d.Bytes), counted(int(d.Launches), "CUDA graph launch", "CUDA graph launches")), true
	case coverage.Migrations:
		return migrationWords(d), true
	case coverage.ZeroKernels:
		return zeroKernelWords(d), true
	case coverage.ZeroCopyCalls:
		return zeroCopyCallWords(d), true
	case coverage.Staging:
		fw := frameworkWords[d.Framework]
		if c := clueWords(framework.Detection{Clues: []framework.Clue{d.Clue}}); d.Clue.Name != "" && c != "" {
			fw += " (" + c + ")"
		}
		return fmt.Sprintf("%s copies to the device from pinned memory only (all %s of at least 1 MiB): an ordinary (NumPy) host array "+
			"it first copies into a pinned staging buffer of its own, CPU work outside every CUDA call that this trace cannot show and that "+
			"pinning at the source (memory_kind=\"pinned_host\") saves",
			fw, counted(int(d.Pinned), "host-to-device copy", "host-to-device copies")), true
	}
	return "", false
}

// zeroKernelWords says which kernels the trace gives no time and what
// that touches.
func zeroKernelWords(d coverage.ZeroKernels) string {
	first := fmt.Sprintf("correlation id %d", d.First.Corr)
	if d.First.Row > 0 {
		first = fmt.Sprintf("data row %d of cuda_gpu_trace", d.First.Row)
	}
	if d.First.Name != "" {
		first = fmt.Sprintf("%q, %s", d.First.Name, first)
	}
	end, their := "end when they start", "their records are damaged, and every number a kernel's time enters (a kernel's rate, the compute a copy overlaps, the replay's GPU work) takes theirs as 0 ns"
	if d.Count == 1 {
		end, their = "ends when it starts", "its record is damaged, and every number a kernel's time enters (a kernel's rate, the compute a copy overlaps, the replay's GPU work) takes it as 0 ns"
	}
	s := fmt.Sprintf("%s of the trace %s (the first: %s): no kernel runs in no time, so %s", counted(int(d.Count), "kernel", "kernels"), end, first, their)
	if len(d.Claims) > 0 {
		s += "; the verdicts it touches: " + strings.Join(d.Claims, ", ")
	}
	return s
}

// remakeWords says how to make the input of the record again: a CSV
// report (a record with a data row) from the report file, else the SQLite
// export.
func remakeWords(r coverage.OpRef) string {
	if r.Row > 0 {
		return "make the CSV reports again (nsys stats --format csv --report cuda_api_trace,cuda_gpu_trace REPORT.nsys-rep)"
	}
	return "export the report again (nsys export --type sqlite -o FILE.sqlite REPORT.nsys-rep)"
}

// zeroCopyCallWords says which copies' calls the trace gives no time and
// what that touches.
func zeroCopyCallWords(d coverage.ZeroCopyCalls) string {
	first := fmt.Sprintf("%s, correlation id %d", d.First.Name, d.First.Corr)
	if d.First.Row > 0 {
		first = fmt.Sprintf("%s, data row %d of cuda_api_trace", d.First.Name, d.First.Row)
	}
	their, end := "their calls end when they start", "their records are damaged"
	if d.Count == 1 {
		their, end = "its call ends when it starts", "its record is damaged"
	}
	return fmt.Sprintf("%s of the trace: %s (the first: %s): no call returns in no time, so %s, and the host time a copy call holds, which the shares, the costs and the replay rest on, takes theirs as 0 ns",
		counted(int(d.Count), "copy", "copies"), their, first, end)
}

// incompleteWords says what nsys did not keep of its capture and what
// that means for a "none".
func incompleteWords(d coverage.Incomplete) string {
	var said []string
	if len(d.NotAll) > 0 {
		s := "nsys says not every " + words.List(d.NotAll) + " event might have been collected"
		if kept := collectedWords(d); kept != "" {
			s += " (it kept " + kept + ")"
		}
		said = append(said, s)
	}
	if len(d.None) > 0 {
		said = append(said, "nsys collected no "+strings.Join(d.None, " and no ")+" event")
	}
	if d.ImportError != "" {
		said = append(said, fmt.Sprintf("it hit an error processing the raw events (%q)", d.ImportError))
	}
	if d.Dropped != "" {
		said = append(said, fmt.Sprintf("it says records were lost (%q)", d.Dropped))
	}
	s := strings.Join(said, "; ") + ": the capture may lack copies, kernels and calls the run made, so what it does not hold may still have happened"
	if len(d.Claims) > 0 {
		s += "; the verdicts it touches: " + strings.Join(d.Claims, ", ")
	}
	return s
}

// collectedWords is what nsys says it kept: "445 CUDA events and 4 NVTX
// events", those families it might not have kept whole first.
func collectedWords(d coverage.Incomplete) string {
	var parts []string
	for _, f := range d.NotAll {
		for _, c := range d.Collected {
			if c.Family == f {
				parts = append(parts, plural(int(c.Events), c.Family+" event"))
			}
		}
	}
	return words.List(parts)
}

// migrationWords says what the unified-memory migrations moved and cost.
func migrationWords(d coverage.Migrations) string {
	var count, bytes, gpu int64
	dirs := map[vocab.CopyKind]*coverage.Migration{}
	causes := map[string]*coverage.Migration{}
	var order []string
	for _, m := range d.Migrations {
		count, bytes, gpu = count+m.Count, bytes+m.Bytes, gpu+m.GPUNs
		c := causes[m.Cause]
		if c == nil {
			c = &coverage.Migration{Cause: m.Cause}
			causes[m.Cause] = c
			order = append(order, m.Cause)
		}
		c.Count, c.Bytes, c.GPUNs = c.Count+m.Count, c.Bytes+m.Bytes, c.GPUNs+m.GPUNs
		s := dirs[m.Direction]
		if s == nil {
			s = &coverage.Migration{Direction: m.Direction}
			dirs[m.Direction] = s
		}
		s.Count, s.Bytes, s.GPUNs = s.Count+m.Count, s.Bytes+m.Bytes, s.GPUNs+m.GPUNs
	}
	var byDir []string
	for _, k := range []struct {
		dir  vocab.CopyKind
		word string
	}{{vocab.CopyHtoD, "to the device"}, {vocab.CopyDtoH, "back to the host"}, {vocab.CopyDtoD, "between devices"}} {
		if m := dirs[k.dir]; m != nil {
			byDir = append(byDir, fmt.Sprintf("%d %s (%s, %s)", m.Count, k.word, formatMB(m.Bytes), ns(m.GPUNs)))
		}
	}
	var byCause []string
	for _, c := range order {
		m := causes[c]
		word := causeWords[c]
		if word == "" {
			word = c
		}
		byCause = append(byCause, fmt.Sprintf("%d %s (%s in %s, %s)", m.Count, word, formatMB(m.Bytes), ns(m.GPUNs), rateWords(m.Bytes, m.GPUNs)))
	}
	s := fmt.Sprintf("%s moved %s in %s on the GPU with no call of the program: the driver moving managed memory, not a copy from a host buffer, "+
		"so no pinning candidate; %s; by cause: %s",
		counted(int(count), "unified-memory migration", "unified-memory migrations"), formatMB(bytes), ns(gpu), words.List(byDir), words.List(byCause))
	if p, f := causes["prefetch"], causes["fault"]; p != nil && f != nil && p.GPUNs > 0 && f.GPUNs > 0 && f.Bytes > 0 {
		pr, fr := float64(p.Bytes)/float64(p.GPUNs), float64(f.Bytes)/float64(f.GPUNs)
		if pr > fr {
			s += fmt.Sprintf("; on page faults data moved %.0fx slower than prefetched", pr/fr)
		}
	}
	return s
}

// causeWords says what moved a migration.
var causeWords = map[string]string{
	"prefetch": "prefetched with cudaMemPrefetchAsync", "fault": "on page faults", "speculative": "prefetched by the driver around faults",
	"eviction": "evicted", "access-counters": "on access counters", "unknown": "of a cause the input does not give",
}

// rateWords is bytes over nanoseconds in GB/s.
func rateWords(bytes, nanos int64) string {
	if nanos <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f GB/s", float64(bytes)/float64(nanos))
}

// coverageAdvice is how to make a capture that shows what this one cannot,
// "" where there is nothing to do.
func coverageAdvice(d diag.Detail) string {
	switch d := d.(type) {
	case coverage.Incomplete:
		switch {
		case d.Retry != "" && d.Framework == framework.JAX:
			return "profile again with nsys profile " + d.Retry + " (no nvtx): under -t cuda,nvtx nsys 2025.3 lost every kernel and copy of a JAX (XLA) program, under -t cuda it kept them all"
		case d.Retry != "":
			return "profile again with nsys profile " + d.Retry + " (no nvtx): under -t cuda,nvtx nsys 2025.3 lost every kernel and copy of a JAX program to this import error, under -t cuda it kept them all"
		case len(d.None) > 0:
			return "profile again with no other profiler or CUPTI client (a second nsys, Nsight Compute, DCGM's profiling metrics) attached to the GPU"
		}
		return "profile again, over a shorter span if nsys loses events again (nsys profile --duration, or --capture-range=cudaProfilerApi around the part that matters)"
	case coverage.NotTraced:
		return "profile with nsys profile -t cuda (with nvtx for the program's ranges)"
	case coverage.GraphsWhole:
		return "to see each graph's copies and kernels, profile with nsys profile --cuda-graph-trace=node"
	case coverage.Migrations:
		if !d.PageFaults {
			return "to see the page faults behind them, profile with nsys profile --cuda-um-gpu-page-faults=true --cuda-um-cpu-page-faults=true; " + prefetchAdvice
		}
		return prefetchAdvice
	case coverage.ZeroCopyCalls:
		return remakeWords(d.First) + "; if its calls still last 0 ns, profile again"
	case coverage.ZeroKernels:
		return remakeWords(d.First) + "; if its kernels still last 0 ns, profile again"
	case coverage.Staging:
		return "to see the staging, profile the CPU too: nsys profile -t cuda,osrt --sample=process-tree --python-sampling=true (without nvtx: nsys 2025.3 lost JAX's CUDA events under -t cuda,nvtx)"
	}
	return ""
}

// prefetchAdvice is what moves managed memory at the prefetch rate.
const prefetchAdvice = "prefetch what a kernel will touch before it runs (cudaMemPrefetchAsync to its device, cudaMemAdvise for where it lives) so that it moves in bulk rather than page by page on faults"

// hiddenWords says that the capture may lack what a "none" would deny,
// naming the diagnostics that say why.
func hiddenWords(codes []diag.Code) string {
	names := make([]string, len(codes))
	for i, c := range codes {
		names[i] = string(c)
	}
	return "the capture may lack copies and kernels the run made (see " + words.List(names) + ")"
}

// savingHiddenWords says that what pinning would save may lie outside what
// the capture shows, naming the diagnostics that say why.
func savingHiddenWords(codes []diag.Code) string {
	names := make([]string, len(codes))
	for i, c := range codes {
		names[i] = string(c)
	}
	return "what pinning would save may lie outside what the capture shows (see " + words.List(names) + ")"
}

// tracingWords says what nsys traced, where the export records it ("" where
// it does not): the trace options, the graph trace level, call stacks.
func tracingWords(c *coverage.Coverage) string {
	if c == nil || !c.Tracing.Known {
		return ""
	}
	t := c.Tracing
	var on, off []string
	for _, o := range []struct {
		name string
		on   bool
	}{{"cuda", t.CUDA}, {"nvtx", t.NVTX}, {"osrt", t.OSRT}} {
		if o.on {
			on = append(on, o.name)
		} else {
			off = append(off, o.name)
		}
	}
	s := "traced with -t " + strings.Join(on, ",")
	if len(on) == 0 {
		s = "traced with none of -t cuda, nvtx, osrt"
	} else if len(off) > 0 {
		s += " (not " + strings.Join(off, ", ") + ")"
	}
	if t.GraphTrace != "" {
		s += "; CUDA graphs traced by " + t.GraphTrace
	}
	if t.PageFaults {
		s += "; unified-memory page faults traced"
	}
	if t.Backtraces {
		s += "; CUDA calls with their call stacks"
	} else {
		s += "; no call stacks"
	}
	return s
}
