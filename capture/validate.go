package capture

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// Plausible magnitudes. A value outside them cannot come from a run of the
// program on real hardware: the input is damaged, edited or not what its
// name says, and no verdict may rest on it.
const (
	// maxEventNs bounds one event's duration: a week.
	maxEventNs = int64(7 * 24 * 3600 * 1e9)
	// maxProgramMs bounds a time the program prints: an hour.
	maxProgramMs = 3600e3
	// maxGBps bounds a bandwidth: 100 TB/s, far above any memory system.
	maxGBps = 1e5
	// maxBytes bounds one copy's size: 1 TiB.
	maxBytes = int64(1) << 40
)

// validate checks what a loader read, the same way for every format: every
// time finite and non-negative, no event ending before it starts, no
// duration, size, time or bandwidth beyond a plausible magnitude. It is the
// last step of every loader, so that no verdict rests on impossible data.
func validate(c *Capture) error {
	v := validator{c: c}
	for _, a := range c.Calls {
		v.event("CUDA API call "+a.Name, a.Row, a.CorrelationID, a.Start, a.End, false)
	}
	for _, m := range c.Memcpys {
		v.event("memory copy "+string(m.Kind), 0, m.CorrelationID, m.Start, m.End, false)
		if v.err == nil && (m.Bytes < 0 || m.Bytes > maxBytes) {
			v.fail(v.where("memory copy "+string(m.Kind), 0, m.CorrelationID),
				fmt.Sprintf("copy size %d bytes is impossible", m.Bytes))
		}
	}
	for _, k := range c.Kernels {
		v.event("kernel "+k.Name, 0, k.CorrelationID, k.Start, k.End, false)
	}
	for _, r := range c.Ranges {
		v.event("NVTX range "+r.Name, 0, 0, r.Start, r.End, r.Open)
	}
	for _, s := range c.APISummary {
		v.total("API summary row "+s.Name, s.TotalNs, s.Calls)
		if v.err == nil && (s.MinNs < 0 || s.MaxNs < 0 || s.MinNs > s.MaxNs && s.MaxNs > 0) {
			v.fail("API summary row "+s.Name, fmt.Sprintf("min %d ns and max %d ns are impossible", s.MinNs, s.MaxNs))
		}
	}
	for _, s := range c.MemSummary {
		v.total("memory summary row "+string(s.Kind), s.TotalNs, s.Count)
		if v.err == nil && (s.TotalMB < 0 || math.IsNaN(s.TotalMB) || s.TotalMB > float64(maxBytes)) {
			v.fail("memory summary row "+string(s.Kind), fmt.Sprintf("total %g MB is impossible", s.TotalMB))
		}
	}
	for _, s := range c.RangeSummary {
		v.total("NVTX summary row "+s.Name, s.TotalNs, s.Instances)
	}
	if c.Program != nil {
		v.program(c.Program)
	}
	return v.err
}

// validator keeps the first problem validate finds.
type validator struct {
	c   *Capture
	err error
}

func (v *validator) fail(where, problem string) {
	if v.err != nil {
		return
	}
	hint := "the file is damaged or was edited; make it again from the capture"
	switch v.c.Format {
	case FormatSQLite, FormatNsysRep:
		hint = "the export is damaged or was edited; " + sqliteExportHint
	case FormatCSV:
		hint = "the report is damaged or was edited; make it again with nsys stats --format csv"
	case FormatTranscript:
		hint = "the transcript should be the unedited stdout of the pinned program"
	case FormatMeasurements:
		hint = "see docs/measurements.md for the format"
	}
	v.err = &InputError{Path: v.c.Path, Where: where, Problem: problem, Hint: hint}
}

// where names an event: its data row in a CSV report, else its correlation id.
func (v *validator) where(what string, row int, corr int64) string {
	switch {
	case row > 0:
		return fmt.Sprintf("data row %d (%s)", row, what)
	case corr != 0:
		return fmt.Sprintf("%s, correlation id %d", what, corr)
	}
	return what
}

// event checks one event's times; an open event has no end.
func (v *validator) event(what string, row int, corr, start, end int64, open bool) {
	if v.err != nil {
		return
	}
	switch {
	case start < 0:
		v.fail(v.where(what, row, corr), fmt.Sprintf("negative start time %d ns", start))
	case open:
	case end < start:
		v.fail(v.where(what, row, corr), fmt.Sprintf("ends before it starts (start %d ns, end %d ns)", start, end))
	case end-start > maxEventNs:
		v.fail(v.where(what, row, corr), fmt.Sprintf("lasts %d ns, more than a week", end-start))
	}
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

// gbps checks one of the program's bandwidths.
func (v *validator) gbps(what string, x float64) {
	if v.err == nil && (math.IsNaN(x) || math.IsInf(x, 0) || x < 0 || x > maxGBps) {
		v.fail(what, fmt.Sprintf("bandwidth %g GB/s is impossible (want 0 to %g GB/s)", x, maxGBps))
	}
}

// bytes checks one of the program's sizes.
func (v *validator) bytes(what string, n int64) {
	if v.err == nil && (n < 0 || n > maxBytes) {
		v.fail(what, fmt.Sprintf("size %d bytes is impossible", n))
	}
}

func (v *validator) program(m *Measurements) {
	for _, c := range m.Copies {
		what := fmt.Sprintf("%s %s copy of %d bytes", c.Direction, c.Source, c.Bytes)
		v.bytes(what, c.Bytes)
		v.ms(what, c.Ms)
		v.gbps(what, c.GBps)
	}
	for _, a := range m.Async {
		what := "async " + a.Source + " row"
		v.bytes(what, a.Bytes)
		v.ms(what+" (call)", a.CallMs)
		v.ms(what+" (completion)", a.CompletionMs)
	}
	for _, k := range m.Kernels {
		what := "kernel " + k.Variant + " row"
		v.bytes(what, k.Bytes)
		v.ms(what, k.MsPerLaunch)
		v.gbps(what, k.GBps)
	}
	if a := m.AsyncCalls; a != nil {
		v.ms("asyncCalls.pageableMs", a.PageableMs)
		v.ms("asyncCalls.pinnedMs", a.PinnedMs)
		v.bytes("asyncCalls.pageableBytes", a.PageableBytes)
		v.bytes("asyncCalls.pinnedBytes", a.PinnedBytes)
	}
	v.gbps("deviceCopyGBps", m.DeviceCopyGBps)
}

// DuplicateKey returns the JSON path of the first object key that appears
// twice in one object of data, or "" (see duplicateKey): for the other JSON
// files nsyscheck reads (--expect files), which must not say two things
// about one value either.
func DuplicateKey(data []byte) string { return duplicateKey(data) }

// duplicateKey returns the JSON path of the first object key that appears
// twice in one object of data ("copies[0].ms"), or "" when there is none or
// data is not valid JSON (the decoder reports that). encoding/json keeps the
// last of two equal keys without a word, so a file saying two things about
// one value would be read as whichever came last.
func duplicateKey(data []byte) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	type level struct {
		object bool
		keys   map[string]bool
		key    string // the current key (object) or index (array)
		index  int
		want   bool // an object expects a key next
	}
	var stack []*level
	path := func() string {
		var b strings.Builder
		for _, l := range stack {
			if l.object {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(l.key)
			} else {
				fmt.Fprintf(&b, "[%d]", l.index)
			}
		}
		return b.String()
	}
	// value marks that a value was read in the innermost container.
	value := func() {
		if len(stack) == 0 {
			return
		}
		l := stack[len(stack)-1]
		if l.object {
			l.want = true
		} else {
			l.index++
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		var top *level
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				stack = append(stack, &level{object: t == '{', keys: map[string]bool{}, want: true})
			case '}', ']':
				stack = stack[:len(stack)-1]
				value()
			}
		case string:
			if top != nil && top.object && top.want {
				if top.keys[t] {
					top.key = t
					return path()
				}
				top.keys[t] = true
				top.key = t
				top.want = false
				continue
			}
			value()
		default:
			value()
		}
	}
}

// copyValidator checks each copy the audit streams (StreamCopies) with
// validate's rules: the copy's and its call's times, and its size. It keeps
// the first problem, and a copy that fails is not handed on, so no class
// total rests on impossible data.
type copyValidator struct{ v validator }

func newCopyValidator(path string, f Format) *copyValidator {
	return &copyValidator{v: validator{c: &Capture{Path: path, Format: f}}}
}

// wrap returns fn behind the check.
func (cv *copyValidator) wrap(fn func(*CopyCall)) func(*CopyCall) {
	return func(c *CopyCall) {
		if cv.v.err != nil {
			return
		}
		cv.check(c)
		if cv.v.err == nil {
			fn(c)
		}
	}
}

func (cv *copyValidator) check(c *CopyCall) {
	v := &cv.v
	what := "memory copy " + string(c.Kind)
	v.event(what, 0, c.CorrelationID, c.Start, c.End, false)
	if c.API != "" {
		v.event("CUDA API call "+c.API, 0, c.CorrelationID, c.CallStart, c.CallEnd, false)
	}
	if v.err == nil && (c.Bytes < 0 || c.Bytes > maxBytes) {
		v.fail(v.where(what, 0, c.CorrelationID), fmt.Sprintf("copy size %d bytes is impossible", c.Bytes))
	}
}

// ranges checks NVTX ranges the audit places copies in.
func (cv *copyValidator) ranges(rs []Range) {
	for _, r := range rs {
		cv.v.event("NVTX range "+r.Name, 0, 0, r.Start, r.End, r.Open)
	}
}
