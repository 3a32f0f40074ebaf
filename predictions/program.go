package predictions

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/diag"

	"github.com/nsyscheck/nsyscheck/vocab"
)

// diagList collects the evaluation's diagnostics, each once.
type diagList struct{ diag.List }

func (d *diagList) add(code diag.Code, level diag.Level, msg string) {
	d.Add(level, diag.Note{Of: code, Text: msg})
}

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

// programLabel says where the program's numbers came from.
func programLabel(c *capture.Capture) string {
	label := "the program's numbers"
	switch c.Format {
	case capture.FormatTranscript:
		label = "the program's transcript"
	case capture.FormatMeasurements:
		label = "the measurements file"
	}
	if f := programFile(c); f != "" {
		return label + " " + f
	}
	return label
}

// programData reads the program's (or a measurements file's) numbers.
func programData(c *capture.Capture, diags *diagList) *sourceData {
	m := c.Program
	label := programLabel(c)
	d := &sourceData{name: SourceProgram, file: programFile(c)}
	for _, dir := range []vocab.Direction{vocab.H2D, vocab.D2H} {
		sd, why := programSweep(m, dir, label)
		if dir == vocab.H2D {
			d.h2d, d.h2dWhy = sd, why
		} else {
			d.d2h, d.d2hWhy = sd, why
		}
	}
	d.async, d.asyncWhy = programAsync(m, label)
	d.kern, d.kernWhy = programKernels(m, label, diags)
	if a := m.AsyncCalls; a != nil && a.PageableMs > 0 && a.PinnedMs > 0 {
		d.calls = &callTotals{pageableMs: a.PageableMs, pinnedMs: a.PinnedMs, pageableN: a.PageableCalls, pinnedN: a.PinnedCalls,
			how: fmt.Sprintf("%s, asyncCalls: total call time of the timed cudaMemcpyAsync calls as read from a trace", label)}
		if a.PageableBytes > 0 && a.PinnedBytes > 0 {
			d.bytes = &byteTotals{pageable: a.PageableBytes, pinned: a.PinnedBytes,
				how: fmt.Sprintf("%s, asyncCalls: bytes moved per group", label)}
		} else {
			d.bytesWhy = label + " gives no bytes per group of cudaMemcpyAsync calls (asyncCalls.pageableBytes/pinnedBytes)"
			d.bytesShort = "the program's numbers give no bytes per group"
		}
	} else {
		d.callsWhy = label + " has no call-time totals from a trace (asyncCalls); the program's own part 2 call times are host-clock means, not cuda_api_trace durations"
		if d.async != nil {
			p, q := d.async.side[vocab.MemPageable], d.async.side[vocab.MemPinned]
			d.callsWhy += fmt.Sprintf(" (for reference, its mean call times give %.1fx)", p.callMs/q.callMs)
		}
		d.bytesWhy = label + " reports the bytes each copy was asked to move, not what the copies moved (no asyncCalls bytes)"
		d.bytesShort = "the program's numbers give no bytes per group"
	}
	if m.DeviceCopyGBps > 0 {
		d.deviceGBps = m.DeviceCopyGBps
		d.deviceGBpsW = "program: " + label + ", deviceCopyGBps"
	}
	for _, g := range m.Gates {
		if !g.Passed {
			diags.add(CodeGateFailed, diag.Error, fmt.Sprintf("the program's correctness gate %q failed: %s; its timings are not trustworthy", g.Name, g.Detail))
		}
	}
	return d
}

func programSweep(m *capture.Measurements, dir vocab.Direction, label string) (*sweepData, string) {
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
			return nil, fmt.Sprintf("%s has a %s copy row with source %q; expected pageable or pinned", label, dir, c.Source)
		}
		if _, dup := into[c.Bytes]; dup {
			return nil, fmt.Sprintf("%s has two %s %s rows for %s", label, dir, c.Source, sizeName(c.Bytes))
		}
		if !(c.Ms > 0) {
			return nil, fmt.Sprintf("%s has a %s %s row for %s with no time", label, dir, c.Source, sizeName(c.Bytes))
		}
		into[c.Bytes] = timing{ms: c.Ms, runs: c.Runs}
	}
	if n == 0 {
		what := "host-to-device (part 1)"
		if dir == vocab.D2H {
			what = "device-to-host (part 1b, the exercise's sweep)"
		}
		return nil, fmt.Sprintf("%s has no %s copy rows", label, what)
	}
	var lone []string
	for b := range sd.pageable {
		if sd.has(b) {
			sd.sizes = append(sd.sizes, b)
		} else {
			lone = append(lone, sizeName(b))
		}
	}
	for b := range sd.pinned {
		if !sd.has(b) {
			lone = append(lone, sizeName(b))
		}
	}
	sort.Slice(sd.sizes, func(i, j int) bool { return sd.sizes[i] < sd.sizes[j] })
	if len(sd.sizes) == 0 {
		return nil, fmt.Sprintf("%s has no %s size with both a pageable and a pinned row", label, dir)
	}
	sd.how = fmt.Sprintf("%s, %s rows (mean ms per copy)", label, dir)
	if len(lone) > 0 {
		sort.Strings(lone)
		sd.how += fmt.Sprintf("; sizes with only one source left out: %s", strings.Join(lone, ", "))
	}
	return sd, ""
}

func programAsync(m *capture.Measurements, label string) (*asyncData, string) {
	ad := &asyncData{side: map[vocab.MemKind]*asyncSide{}, how: fmt.Sprintf("%s, part 2 rows (host-clock means)", label)}
	for _, a := range m.Async {
		src := vocab.MemKind(strings.ToLower(a.Source))
		if src != vocab.MemPageable && src != vocab.MemPinned {
			continue
		}
		if ad.side[src] != nil {
			return nil, fmt.Sprintf("%s has two part 2 rows for %s", label, src)
		}
		ad.side[src] = &asyncSide{callMs: a.CallMs, completionMs: a.CompletionMs, runs: a.Runs, bytes: a.Bytes}
	}
	for _, src := range sources {
		s := ad.side[src]
		if s == nil {
			return nil, fmt.Sprintf("%s has no part 2 row for the %s source", label, src)
		}
		if !(s.completionMs > 0) {
			return nil, fmt.Sprintf("%s gives the %s source no completion time", label, src)
		}
	}
	return ad, ""
}

// kernelBytesOf returns the bytes a scaleCopy launch reads and writes: the
// program's own figure when given, else the bundled program's design.
func kernelBytesOf(m *capture.Measurements, diags *diagList) (int64, string) {
	design := 2 * kernelBytes
	designFrom := fmt.Sprintf("the lesson's design: %s read + %s written per launch (no program numbers give it)", sizeName(kernelBytes), sizeName(kernelBytes))
	if m == nil {
		return design, designFrom
	}
	for _, k := range m.Kernels {
		if k.Bytes > 0 {
			if k.GBps > 0 && k.MsPerLaunch > 0 {
				implied := k.GBps * 1e9 * k.MsPerLaunch * 1e-3
				if math.Abs(implied-float64(k.Bytes))/float64(k.Bytes) > 0.05 {
					diags.add(CodeKernelBytes, diag.Warning, fmt.Sprintf(
						"the program's %s row gives %d bytes per launch, but its GB/s x ms imply %.0f bytes", k.Variant, k.Bytes, implied))
				}
			}
			return k.Bytes, fmt.Sprintf("the program's numbers: %d bytes read + written per launch (%s row)", k.Bytes, k.Variant)
		}
	}
	for _, k := range m.Kernels {
		if k.GBps > 0 && k.MsPerLaunch > 0 {
			implied := k.GBps * 1e9 * k.MsPerLaunch * 1e-3
			b := int64(math.Round(implied/float64(mib))) * mib
			if b > 0 {
				return b, fmt.Sprintf("the program's numbers: %s row's GB/s x ms = %.0f bytes per launch, taken as %s", k.Variant, implied, sizeName(b))
			}
		}
	}
	return design, designFrom
}

func programKernels(m *capture.Measurements, label string, diags *diagList) (*kernelData, string) {
	kd := &kernelData{ms: map[vocab.Variant]timing{}, how: fmt.Sprintf("%s, part 3 rows (ms per launch)", label)}
	for _, k := range m.Kernels {
		v := vocab.Variant(strings.ToLower(k.Variant))
		if v != vocab.DeviceResident && v != vocab.ZeroCopy {
			continue
		}
		if _, dup := kd.ms[v]; dup {
			return nil, fmt.Sprintf("%s has two part 3 rows for %s", label, v)
		}
		kd.ms[v] = timing{ms: k.MsPerLaunch, runs: k.Runs}
	}
	for _, v := range variants {
		tm, ok := kd.ms[v]
		if !ok {
			return nil, fmt.Sprintf("%s has no part 3 row for %s", label, v)
		}
		if !(tm.ms > 0) {
			return nil, fmt.Sprintf("%s gives %s no time per launch", label, v)
		}
	}
	kd.bytes, kd.bytesFrom = kernelBytesOf(m, diags)
	return kd, ""
}
