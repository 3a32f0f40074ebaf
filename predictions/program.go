package predictions

import (
	"math"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/program"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// diagList collects the evaluation's diagnostics, each once.
type diagList = diag.List

// programFile is the file the program's numbers came from, by its base
// name: the results JSON, transcript or measurements file; "" when the
// input names none.
func programFile(c *capture.Capture) string {
	for _, f := range c.Files {
		l := strings.ToLower(f)
		if strings.HasSuffix(l, ".json") || strings.HasSuffix(l, ".txt") {
			return filepath.Base(f)
		}
	}
	return ""
}

// programOf names where the program's numbers came from.
func programOf(c *capture.Capture) Program {
	return Program{Format: c.Format, File: programFile(c)}
}

// programCalls reads prediction 4 from the program's (or a measurements
// file's) asyncCalls: the call-time totals a trace gave it, and the bytes
// per group where it gives them.
func programCalls(c *capture.Capture, n *Numbers) {
	label := programOf(c)
	if a := c.Program.AsyncCalls; a != nil && a.PageableMs > 0 && a.PinnedMs > 0 {
		callsSlot.Set(n, &callTotals{pageableMs: a.PageableMs, pinnedMs: a.PinnedMs, pageableN: a.PageableCalls, pinnedN: a.PinnedCalls,
			how: ProgramCalls{Program: label}}, nil)
		if a.PageableBytes > 0 && a.PinnedBytes > 0 {
			bytesSlot.Set(n, &byteTotals{pageable: a.PageableBytes, pinned: a.PinnedBytes, how: ProgramBytes{Program: label}}, nil)
		} else {
			bytesSlot.Set(n, nil, ProgramNoGroupBytes{Program: label})
			bytesSlot.SetShort(n, ProgramGivesNoGroupBytes{})
		}
		return
	}
	why := ProgramNoCallTotals{Program: label}
	if ad, _ := asyncSlot.Get(n); ad != nil {
		p, q := ad.side[vocab.MemPageable], ad.side[vocab.MemPinned]
		why.MeanRatio = ptr(p.callMs / q.callMs)
	}
	callsSlot.Set(n, nil, why)
	bytesSlot.Set(n, nil, ProgramAskedBytes{Program: label})
	bytesSlot.SetShort(n, ProgramGivesNoGroupBytes{})
}

func programSweep(m *program.Measurements, dir vocab.Direction, label Program) (*sweepData, Why) {
	sd := &sweepData{dir: dir, pageable: map[int64]timing{}, pinned: map[int64]timing{}}
	n := 0
	for _, c := range m.Copies {
		if !strings.EqualFold(c.Direction, string(dir)) {
			continue
		}
		n++
		var into map[int64]timing
		switch strings.ToLower(c.Source) {
		case "pageable":
			into = sd.pageable
		case "pinned":
			into = sd.pinned
		default:
			return nil, ProgramBadSource{Program: label, Dir: dir, Source: c.Source}
		}
		if _, dup := into[c.Bytes]; dup {
			return nil, ProgramTwoRows{Program: label, Dir: dir, Source: c.Source, Bytes: c.Bytes}
		}
		if !(c.Ms > 0) {
			return nil, ProgramNoTime{Program: label, Dir: dir, Source: c.Source, Bytes: c.Bytes}
		}
		into[c.Bytes] = timing{ms: c.Ms, runs: c.Runs}
	}
	if n == 0 {
		return nil, ProgramNoCopies{Program: label, Dir: dir}
	}
	var lone []int64
	for b := range sd.pageable {
		if sd.has(b) {
			sd.sizes = append(sd.sizes, b)
		} else {
			lone = append(lone, b)
		}
	}
	for b := range sd.pinned {
		if !sd.has(b) {
			lone = append(lone, b)
		}
	}
	sort.Slice(sd.sizes, func(i, j int) bool { return sd.sizes[i] < sd.sizes[j] })
	if len(sd.sizes) == 0 {
		return nil, ProgramNoPair{Program: label, Dir: dir}
	}
	sort.Slice(lone, func(i, j int) bool { return lone[i] < lone[j] })
	sd.how = ProgramSweep{Program: label, Dir: dir, Lone: lone}
	return sd, nil
}

func programAsync(m *program.Measurements, label Program) (*asyncData, Why) {
	ad := &asyncData{side: map[vocab.MemKind]*asyncSide{}, how: ProgramAsync{Program: label}}
	for _, a := range m.Async {
		src := vocab.MemKind(strings.ToLower(a.Source))
		if src != vocab.MemPageable && src != vocab.MemPinned {
			continue
		}
		if ad.side[src] != nil {
			return nil, ProgramTwoAsync{Program: label, Source: src}
		}
		ad.side[src] = &asyncSide{callMs: a.CallMs, completionMs: a.CompletionMs, runs: a.Runs, bytes: a.Bytes}
	}
	for _, src := range sources {
		s := ad.side[src]
		if s == nil {
			return nil, ProgramNoAsync{Program: label, Source: src}
		}
		if !(s.completionMs > 0) {
			return nil, ProgramNoCompletion{Program: label, Source: src}
		}
	}
	return ad, nil
}

// kernelBytesOf returns the bytes a scaleCopy launch reads and writes: the
// program's own figure when given, else the bundled program's design.
func kernelBytesOf(m *program.Measurements, diags *diagList) (int64, KernelBytesFrom) {
	design := 2 * kernelBytes
	designFrom := KernelBytesFrom{Bytes: design}
	if m == nil {
		return design, designFrom
	}
	for _, k := range m.Kernels {
		if k.Bytes > 0 {
			if k.GBps > 0 && k.MsPerLaunch > 0 {
				implied := k.GBps * 1e9 * k.MsPerLaunch * 1e-3
				if math.Abs(implied-float64(k.Bytes))/float64(k.Bytes) > 0.05 {
					diags.Add(diag.Warning, KernelBytesMismatch{Variant: k.Variant, Bytes: k.Bytes, Implied: implied})
				}
			}
			return k.Bytes, KernelBytesFrom{Given: true, Variant: k.Variant, Bytes: k.Bytes}
		}
	}
	for _, k := range m.Kernels {
		if k.GBps > 0 && k.MsPerLaunch > 0 {
			implied := k.GBps * 1e9 * k.MsPerLaunch * 1e-3
			b := int64(math.Round(implied/float64(mib))) * mib
			if b > 0 {
				return b, KernelBytesFrom{Implied: true, Variant: k.Variant, Bytes: b, ImpliedBytes: implied}
			}
		}
	}
	return design, designFrom
}

func programKernels(m *program.Measurements, label Program, diags *diagList) (*kernelData, Why) {
	kd := &kernelData{ms: map[vocab.Variant]timing{}, how: ProgramKernels{Program: label}}
	for _, k := range m.Kernels {
		v := vocab.Variant(strings.ToLower(k.Variant))
		if v != vocab.DeviceResident && v != vocab.ZeroCopy {
			continue
		}
		if _, dup := kd.ms[v]; dup {
			return nil, ProgramTwoKernels{Program: label, Variant: v}
		}
		kd.ms[v] = timing{ms: k.MsPerLaunch, runs: k.Runs}
	}
	for _, v := range variants {
		tm, ok := kd.ms[v]
		if !ok {
			return nil, ProgramNoKernel{Program: label, Variant: v}
		}
		if !(tm.ms > 0) {
			return nil, ProgramNoLaunchTime{Program: label, Variant: v}
		}
	}
	kd.bytes, kd.bytesFrom = kernelBytesOf(m, diags)
	return kd, nil
}
