package capture

import (
	"context"
	"fmt"
	"math"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/limits"
	"github.com/nsyscheck/nsyscheck/program"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// Plausible magnitudes. A value outside them cannot come from a run of the
// program on real hardware: the input is damaged, edited or not what its
// name says, and no verdict may rest on it.
const (
	// maxEventNs bounds one event's duration: a week.
	maxEventNs = int64(7 * 24 * 3600 * 1e9)
	// maxClockNs bounds a time on the capture's clock: 2^62 ns, 146 years.
	// nsys counts from boot, or from 1970 where a trace is put on wall
	// time (1.7e18 ns in 2024); a later time was shifted, and the sums and
	// differences worked on such times overflow int64.
	maxClockNs = int64(1) << 62
	// maxProgramMs bounds a time the program prints: an hour.
	maxProgramMs = 3600e3
	// maxBytes bounds one copy's size: 1 TiB.
	maxBytes = int64(1) << 40
)

// validate checks a capture the way validating checks a stream, for a
// capture built in memory and for the program's own numbers: every time
// finite and non-negative, no event ending before it starts, no duration,
// size, time or bandwidth beyond a plausible magnitude, so that no verdict
// rests on impossible data.
func validate(c *Capture) error {
	v := validator{path: c.Path, format: c.Format}
	for _, a := range c.Calls {
		v.event("CUDA API call ", a.Name, a.Row, a.CorrelationID, a.Start, a.End, false)
	}
	for _, m := range c.Memcpys.All() {
		v.copy(m.Kind, 0, m.CorrelationID, m.Start, m.End, m.Bytes)
	}
	for _, k := range c.Kernels {
		v.event("kernel ", k.Name, 0, k.CorrelationID, k.Start, k.End, false)
	}
	for _, r := range c.Ranges {
		v.event("NVTX range ", r.Name, 0, 0, r.Start, r.End, r.Open)
	}
	for _, s := range c.APISummary {
		v.apiSum(s.Name, s.TotalNs, s.Calls, s.MinNs, s.MaxNs)
	}
	for _, s := range c.MemSummary {
		v.copySum(s.Kind, s.TotalNs, s.Count, s.TotalMB)
	}
	for _, s := range c.RangeSummary {
		v.total("NVTX summary row "+s.Name, s.TotalNs, s.Instances)
	}
	if c.Program != nil {
		v.program(c.Program)
	}
	return v.err
}

// validating returns h behind validate's checks and the checks across
// records (crossCheck), with a look at ctx every recordsPerCheck records:
// a record that fails them is not handed on, and its problem, an
// *inputerr.Error that names the record (the reader names the file and
// table), stops the reader. Once the reader is done, the crossCheck's
// finish makes the checks that need every record.
func validating(ctx context.Context, h records.Handler, format Format) (records.Handler, *crossCheck) {
	v := &validator{format: format}
	x := newCrossCheck(ctx, format)
	check := func(next func() error) error {
		if v.err != nil {
			return v.err
		}
		if err := x.tick(); err != nil {
			return err
		}
		return next()
	}
	out := h
	if h.Call != nil {
		out.Call = func(a *records.Call) error {
			v.event("CUDA API call ", a.Name, a.Row, a.Corr, a.Start, a.End, false)
			if v.err == nil {
				x.call(a)
			}
			return check(func() error { return h.Call(a) })
		}
	}
	if h.Op != nil {
		out.Op = func(o *records.Op) error {
			switch o.Kind {
			case records.OpCopy:
				v.copy(o.Copy, o.Row, o.Corr, o.Start, o.End, o.Bytes)
			case records.OpKernel:
				v.event("kernel ", o.Name, o.Row, o.Corr, o.Start, o.End, false)
			default:
				v.memset(o.Row, o.Corr, o.Start, o.End, o.Bytes)
			}
			if c := o.Call; c != nil {
				v.event("CUDA API call ", c.Name, c.Row, c.Corr, c.Start, c.End, false)
			}
			if v.err == nil {
				x.op(o)
			}
			return check(func() error { return h.Op(o) })
		}
	}
	// The metadata (the GPU, its link) and the synchronisations are read
	// for the checks whether or not h wants them.
	out.Meta = func(m *records.Meta) error {
		x.meta(m)
		if h.Meta == nil {
			return nil
		}
		return h.Meta(m)
	}
	out.Sync = func(s *records.Sync) error {
		v.event("synchronisation", "", 0, s.Corr, s.Start, s.End, false)
		if v.err == nil {
			x.sync(s)
		}
		return check(func() error {
			if h.Sync == nil {
				return nil
			}
			return h.Sync(s)
		})
	}
	// The event recordings and graph launches are checked where h reads
	// them (the audit's timeline).
	if h.Event != nil {
		out.Event = func(e *records.EventRecord) error {
			x.event(e)
			return check(func() error { return h.Event(e) })
		}
	}
	if h.Graph != nil {
		x.graphRead = h.Call != nil
		out.Graph = func(g *records.GraphLaunch) error {
			x.graph(g)
			return check(func() error { return h.Graph(g) })
		}
	}
	if h.Range != nil {
		out.Range = func(r *records.Range) error {
			v.event("NVTX range ", r.Name, 0, 0, r.Start, r.End, r.Open)
			if v.err == nil {
				x.rng(r)
			}
			return check(func() error { return h.Range(r) })
		}
	}
	validatingSums(&out, h, v, check)
	return out, x
}

// validatingSums sets out's summary handlers to h's behind v's checks.
func validatingSums(out *records.Handler, h records.Handler, v *validator, check func(func() error) error) {
	if h.APISum != nil {
		out.APISum = func(s *records.APISum) error {
			v.apiSum(s.Name, s.TotalNs, s.Calls, s.MinNs, s.MaxNs)
			return check(func() error { return h.APISum(s) })
		}
	}
	if h.CopySum != nil {
		out.CopySum = func(s *records.CopySum) error {
			v.copySum(s.Kind, s.TotalNs, s.Count, s.TotalMB)
			return check(func() error { return h.CopySum(s) })
		}
	}
	if h.RangeSum != nil {
		out.RangeSum = func(s *records.RangeSum) error {
			v.total("NVTX summary row "+s.Name, s.TotalNs, s.Instances)
			return check(func() error { return h.RangeSum(s) })
		}
	}
}

// copy checks one copy's times and size.
func (v *validator) copy(kind vocab.CopyKind, row int, corr, start, end, bytes int64) {
	v.event("memory copy ", string(kind), row, corr, start, end, false)
	if v.err == nil && (bytes < 0 || bytes > maxBytes) {
		v.fail(v.where("memory copy "+string(kind), row, corr), fmt.Sprintf("copy size %d bytes is impossible", bytes))
	}
}

// memset checks one memset's times and size, as copy a copy's.
func (v *validator) memset(row int, corr, start, end, bytes int64) {
	v.event("memset", "", row, corr, start, end, false)
	if v.err == nil && (bytes < 0 || bytes > maxBytes) {
		v.fail(v.where("memset", row, corr), fmt.Sprintf("memset size %d bytes is impossible", bytes))
	}
}

// apiSum checks one row of an API summary.
func (v *validator) apiSum(name string, totalNs, calls, minNs, maxNs int64) {
	v.total("API summary row "+name, totalNs, calls)
	if v.err == nil && (minNs < 0 || maxNs < 0 || minNs > maxNs && maxNs > 0) {
		v.fail("API summary row "+name, fmt.Sprintf("min %d ns and max %d ns are impossible", minNs, maxNs))
	}
}

// copySum checks one row of the copy summaries.
func (v *validator) copySum(kind vocab.CopyKind, totalNs, count int64, totalMB float64) {
	v.total("memory summary row "+string(kind), totalNs, count)
	if v.err == nil && (totalMB < 0 || math.IsNaN(totalMB) || totalMB > float64(maxBytes)) {
		v.fail("memory summary row "+string(kind), fmt.Sprintf("total %g MB is impossible", totalMB))
	}
}

// validator keeps the first problem validate finds in what was read from
// the input at path, as format; a validator of a stream has no path (the
// reader names the file).
type validator struct {
	path   string
	format Format
	err    error
}

func (v *validator) fail(where, problem string) {
	if v.err != nil {
		return
	}
	v.err = &inputerr.Error{Path: v.path, Where: where, Problem: problem, Hint: damageHint(v.format)}
}

// where names an event: its data row in a CSV report, else its correlation id.
func (v *validator) where(what string, row int, corr int64) string { return opWhere(row, what, corr) }

// event checks one event's times; an open event has no end. The event is
// named what+name, a string made only for a message.
func (v *validator) event(what, name string, row int, corr, start, end int64, open bool) {
	if v.err != nil {
		return
	}
	problem := ""
	switch {
	case start < 0:
		problem = fmt.Sprintf("negative start time %d ns", start)
	case open && start > maxClockNs:
		problem = pastClock(start, end)
	case open:
	case end < start:
		problem = fmt.Sprintf("ends before it starts (start %d ns, end %d ns)", start, end)
	case end-start > maxEventNs:
		problem = fmt.Sprintf("lasts %d ns, more than a week", end-start)
	case end > maxClockNs:
		problem = pastClock(start, end)
	}
	if problem != "" {
		v.fail(v.where(what+name, row, corr), problem)
	}
}

// pastClock says that an event's times lie past maxClockNs.
func pastClock(start, end int64) string {
	return fmt.Sprintf("a time past %d ns (2^62 ns, 146 years) on the capture's clock (start %d ns, end %d ns): nsys counts from boot or from 1970, so the record was shifted", maxClockNs, start, end)
}

// total checks a summary row's total time and count.
func (v *validator) total(what string, ns, count int64) {
	if v.err != nil {
		return
	}
	switch {
	case ns < 0:
		v.fail(what, fmt.Sprintf("negative total time %d ns", ns))
	case count < 0:
		v.fail(what, fmt.Sprintf("negative count %d", count))
	}
}

// ms checks one of the program's times in milliseconds.
func (v *validator) ms(what string, x float64) {
	if v.err == nil && (math.IsNaN(x) || math.IsInf(x, 0) || x < 0 || x > maxProgramMs) {
		v.fail(what, fmt.Sprintf("time %g ms is impossible (want 0 to %g ms)", x, maxProgramMs))
	}
}

// gbps checks one of the program's bandwidths against limit, the fastest
// link or memory the number can come from (of names it).
func (v *validator) gbps(what string, x float64, b limits.Bound, memory bool) {
	if v.err != nil {
		return
	}
	if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
		v.fail(what, fmt.Sprintf("bandwidth %.4g GB/s is impossible", x))
	} else if why := b.Exceeded(x, memory); why != "" {
		v.fail(what, "bandwidth "+why)
	}
}

// printedMs is how far a time the program printed may be from the one it
// measured: the transcript rounds milliseconds to three decimals.
const printedMs = 0.0005

// rateAgrees checks that a bandwidth the program gave agrees with its own
// bytes and milliseconds: bytes over any time that rounds to ms must come
// within a factor of two of gbps (both are rounded, and a mean of rates is
// not the rate of the mean), so that a time or rate edited by orders of
// magnitude is not read as either.
func (v *validator) rateAgrees(what string, bytes int64, ms, gbps float64) {
	if v.err != nil || gbps <= 0 || ms <= 0 || bytes <= 0 {
		return
	}
	fastest := float64(bytes) / (max(ms-printedMs, ms/2) * 1e6)
	slowest := float64(bytes) / ((ms + printedMs) * 1e6)
	if fastest < gbps/2 || slowest > gbps*2 {
		v.fail(what, fmt.Sprintf("%g GB/s contradicts its own %d bytes in %g ms (%.4g GB/s): a time or a rate is wrong", gbps, bytes, ms, float64(bytes)/(ms*1e6)))
	}
}

// bytes checks one of the program's sizes.
func (v *validator) bytes(what string, n int64) {
	if v.err == nil && (n < 0 || n > maxBytes) {
		v.fail(what, fmt.Sprintf("size %d bytes is impossible", n))
	}
}

// program checks the program's numbers: each within its magnitude, each
// bandwidth within the fastest link or memory it could come from, and each
// agreeing with the bytes and time beside it.
func (v *validator) program(m *program.Measurements) {
	link, memory := limits.HostLink(m.GPU, m.PCIeGen, m.PCIeWidth), limits.DeviceMemory(m.GPU)
	for _, c := range m.Copies {
		what := fmt.Sprintf("%s %s copy of %d bytes", c.Direction, c.Source, c.Bytes)
		v.bytes(what, c.Bytes)
		v.ms(what, c.Ms)
		v.gbps(what, c.GBps, link, false)
		if c.Ms > 0 {
			v.gbps(what, float64(c.Bytes)/(c.Ms*1e6), link, false)
		}
		v.rateAgrees(what, c.Bytes, c.Ms, c.GBps)
	}
	for _, a := range m.Async {
		what := "async " + a.Source + " row"
		v.bytes(what, a.Bytes)
		v.ms(what+" (call)", a.CallMs)
		v.ms(what+" (completion)", a.CompletionMs)
		if a.CompletionMs > 0 {
			v.gbps(what+" (completion)", float64(a.Bytes)/(a.CompletionMs*1e6), link, false)
		}
	}
	for _, k := range m.Kernels {
		what := "kernel " + k.Variant + " row"
		bound, fromMemory := limits.Kernel(vocab.Variant(k.Variant), m.GPU, m.PCIeGen, m.PCIeWidth)
		v.bytes(what, k.Bytes)
		v.ms(what, k.MsPerLaunch)
		v.gbps(what, k.GBps, bound, fromMemory)
		if k.MsPerLaunch > 0 {
			v.gbps(what, float64(k.Bytes)/(k.MsPerLaunch*1e6), bound, fromMemory)
		}
		v.rateAgrees(what, k.Bytes, k.MsPerLaunch, k.GBps)
	}
	if a := m.AsyncCalls; a != nil {
		v.ms("asyncCalls.pageableMs", a.PageableMs)
		v.ms("asyncCalls.pinnedMs", a.PinnedMs)
		v.bytes("asyncCalls.pageableBytes", a.PageableBytes)
		v.bytes("asyncCalls.pinnedBytes", a.PinnedBytes)
	}
	v.gbps("deviceCopyGBps", m.DeviceCopyGBps, memory, true)
}
