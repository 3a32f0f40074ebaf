package program

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
)

const mib = 1 << 20

// MaxFile bounds a transcript or measurements file: the program prints a
// few kilobytes.
const MaxFile = 64 * mib

// ---------------------------------------------------------------------------
// Transcript

var (
	reDevice    = regexp.MustCompile(`^device: (.*) \(sm_(\d+), (\d+) SMs\), driver (\d+), runtime (\d+)$`)
	reGateFail  = regexp.MustCompile(`^gate (.+?)\s+FAILED: ?(.*)$`)
	reGateOK    = regexp.MustCompile(`^gate (.+?)\s+ok$`)
	rePart1     = regexp.MustCompile(`^Part 1: blocking H2D$`)
	rePart1b    = regexp.MustCompile(`^Part 1b: blocking D2H$`)
	rePart2     = regexp.MustCompile(`^Part 2: async call vs completion \((\d+) MiB\)$`)
	rePart3     = regexp.MustCompile(`^Part 3: zero-copy(?: \((\d+) MiB\))?$`)
	reCopyRow   = regexp.MustCompile(`^(pageable|pinned)\s+(\d+) MiB\s+(\S+) ms\s+(\S+) GB/s$`)
	reAsyncRow  = regexp.MustCompile(`^(pageable|pinned)\s+call\s+(\S+) ms\s+completion\s+(\S+) ms\s+call is\s+(\S+)%$`)
	reKernelRow = regexp.MustCompile(`^(device-resident|zero-copy)\s+(\S+) ms/launch\s+(\S+) GB/s$`)
	reReference = regexp.MustCompile(`^Reference: device-to-device cudaMemcpy (\d+) MiB\s+(\S+) ms\s+(\S+) GB/s \(read \+ write\)$`)
	// nsys's progress bar, which may share a line with the program's output.
	reProgress = regexp.MustCompile(`\[\d+/\d+\] \[[^\]]*\] ?\S*`)
)

// nsysLine reports whether a line is Nsight Systems' own output.
func nsysLine(s string) bool {
	for _, p := range []string{"Collecting data...", "Generating '", "Generated:", "Processing events...",
		"Saving temporary", "Creating final output", "Exporting ", "Importing ", "WARNING:", "Warning:",
		"The target application terminated", "Capture range ", "Processing [", "Report file "} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return strings.HasSuffix(s, ".nsys-rep") || strings.HasSuffix(s, ".qdstrm")
}

// The parts of the transcript, in the order the program prints them.
const (
	partNone = iota
	part1
	part1b
	part2
	part3
)

// transcript is ParseTranscript's state: the numbers read so far, the part
// the rows belong to and the line being read.
type transcript struct {
	m                       *Measurements
	name                    string
	part                    int
	asyncBytes, kernelBytes int64
	seen                    map[string]int // row key -> line
	gates                   map[string]int // gate name -> line
	found                   bool           // a part header or the reference line was read
	line                    int
}

// ParseTranscript parses the program's stdout; name is used in errors. A
// transcript saved as UTF-16 or UTF-32 is refused as such, not read as
// text without the program's lines; a UTF-8 byte-order mark is skipped.
func ParseTranscript(r io.Reader, name string) (*Measurements, error) {
	t := &transcript{m: &Measurements{Schema: Schema, Source: "program transcript"}, name: name, seen: map[string]int{}}
	br := bufio.NewReader(r)
	// A UTF-8 byte-order mark is skipped: the first line would otherwise
	// not read as the device line.
	if e := inputerr.StartText(br); e != nil {
		return nil, inputerr.NotUTF8(name, e, "save the program's stdout again as it wrote it (./pinned > FILE in a POSIX shell)")
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		t.line++
		s := cleanLine(sc.Text())
		if s == "" || nsysLine(s) {
			continue
		}
		if handled, err := t.header(s); err != nil {
			return nil, err
		} else if handled {
			continue
		}
		if err := t.row(s); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		var ie *inputerr.Error
		if errors.As(err, &ie) {
			return nil, ie
		}
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, t.bad(t.line+1, "a line longer than 4 MiB: this is not the program's output")
		}
		return nil, &inputerr.Error{Path: name, Where: fmt.Sprintf("line %d", t.line+1), Problem: "cannot read the transcript", Err: err}
	}
	if !t.found {
		return nil, t.noOutput()
	}
	if rows, gate := uncheckedRows(t.m); gate != "" {
		return nil, &inputerr.Error{Path: name,
			Problem: fmt.Sprintf("the transcript reports the timings of %s without the correctness gate %q that checks them, where it reports the program's other gates: %s", rows, gate, uncheckedWhy),
			Hint:    "the transcript should be the unedited stdout of one run of the pinned program"}
	}
	return t.m, nil
}

// cleanLine is what is left of a line once nsys's progress bars are
// removed: a bar redraws itself with \r, so the last non-empty segment.
func cleanLine(raw string) string {
	var s string
	for _, seg := range strings.Split(raw, "\r") {
		seg = strings.TrimSpace(reProgress.ReplaceAllString(seg, ""))
		if seg != "" {
			s = seg
		}
	}
	return s
}

func (t *transcript) bad(line int, problem string) error {
	return &inputerr.Error{Path: t.name, Where: fmt.Sprintf("line %d", line), Problem: problem,
		Hint: "the transcript should be the unedited stdout of the pinned program"}
}

// num reads a positive number (or zero, where allowZero) named what.
func (t *transcript) num(s, what string, allowZero bool) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || (!allowZero && v == 0) {
		return 0, t.bad(t.line, fmt.Sprintf("%s %q is not a positive number", what, s))
	}
	return v, nil
}

// nums reads several numbers with num, each named by the word beside it:
// nums(allowZero, s1, what1, s2, what2, ...).
func (t *transcript) nums(allowZero []bool, pairs ...string) ([]float64, error) {
	out := make([]float64, len(pairs)/2)
	for i := range out {
		v, err := t.num(pairs[2*i], pairs[2*i+1], allowZero[i])
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// dup refuses a row the transcript already held.
func (t *transcript) dup(key string) error {
	if prev, ok := t.seen[key]; ok {
		return t.bad(t.line, fmt.Sprintf("row %s repeats the row of line %d", key, prev))
	}
	t.seen[key] = t.line
	return nil
}

// gateOnce refuses a gate the transcript already reported: the program
// prints each gate once, so a second line of one (the same verdict or
// the other) is an edited transcript or two runs' lines, and which holds
// is unclear.
func (t *transcript) gateOnce(g Gate) error {
	if t.gates == nil {
		t.gates = map[string]int{}
	}
	first, dup := t.gates[g.Name]
	if !dup {
		t.gates[g.Name] = t.line
		return nil
	}
	was := "passed"
	for _, old := range t.m.Gates {
		if old.Name == g.Name && !old.Passed {
			was = "failed"
		}
	}
	now := "passed"
	if !g.Passed {
		now = "failed"
	}
	return &inputerr.Error{Path: t.name, Where: fmt.Sprintf("lines %d and %d", first, t.line),
		Problem: fmt.Sprintf("the correctness gate %q is reported twice (%s on line %d, %s on line %d), where the program reports each once: which holds is unclear",
			g.Name, was, first, now, t.line),
		Hint: "the transcript should be the unedited stdout of one run of the pinned program"}
}

// noOutput explains a transcript without a part: a failed gate, or no
// program output at all.
func (t *transcript) noOutput() error {
	for _, g := range t.m.Gates {
		if !g.Passed {
			return &inputerr.Error{Path: t.name, Problem: "no program output found: the program stopped after gate " +
				g.Name + " FAILED: " + g.Detail, Hint: "fix the failing correctness gate and run the program again"}
		}
	}
	return &inputerr.Error{Path: t.name, Problem: "no program output found",
		Hint: "expected the pinned program's stdout: a device line, gate lines and Part 1/1b/2/3 tables"}
}

// header reads the lines that are not result rows: device, gates, part
// headers and the device-to-device reference. handled is false for any
// other line.
func (t *transcript) header(s string) (handled bool, err error) {
	m := t.m
	switch {
	case strings.HasPrefix(s, "device:"):
		g := reDevice.FindStringSubmatch(s)
		if g == nil {
			return true, t.bad(t.line, "malformed device line")
		}
		if m.GPU != "" {
			return true, t.bad(t.line, "a second device line: the transcript holds more than one run")
		}
		m.GPU, m.Driver, m.CUDA = g[1], g[4], g[5]
	case strings.HasPrefix(s, "gate "):
		var g Gate
		if f := reGateFail.FindStringSubmatch(s); f != nil {
			g = Gate{Name: f[1], Passed: false, Detail: f[2]}
		} else if f := reGateOK.FindStringSubmatch(s); f != nil {
			g = Gate{Name: f[1], Passed: true}
		} else {
			return true, t.bad(t.line, "malformed gate line")
		}
		if err := t.gateOnce(g); err != nil {
			return true, err
		}
		m.Gates = append(m.Gates, g)
	case strings.HasPrefix(s, "Part "):
		return true, t.partHeader(s)
	case strings.HasPrefix(s, "Reference:"):
		g := reReference.FindStringSubmatch(s)
		if g == nil {
			return true, t.bad(t.line, "malformed device-to-device reference line")
		}
		v, err := t.nums([]bool{false, false}, g[3], "GB/s", g[2], "ms")
		if err != nil {
			return true, err
		}
		m.DeviceCopyGBps = v[0]
		t.found, t.part = true, partNone
	default:
		return false, nil
	}
	return true, nil
}

// partHeader starts a part; parts 2 and 3 name their buffer size.
func (t *transcript) partHeader(s string) error {
	size := func(g string, which string) (int64, error) {
		n, err := strconv.ParseInt(g, 10, 64)
		if err != nil || n <= 0 || n > 1<<30 {
			return 0, t.bad(t.line, "bad size in the "+which+" header")
		}
		return n * mib, nil
	}
	switch {
	case rePart1.MatchString(s):
		t.part = part1
	case rePart1b.MatchString(s):
		t.part = part1b
	case rePart2.MatchString(s):
		b, err := size(rePart2.FindStringSubmatch(s)[1], "Part 2")
		if err != nil {
			return err
		}
		t.asyncBytes, t.part = b, part2
	case rePart3.MatchString(s):
		t.kernelBytes = 0
		if g := rePart3.FindStringSubmatch(s); g[1] != "" {
			b, err := size(g[1], "Part 3")
			if err != nil {
				return err
			}
			t.kernelBytes = 2 * b // read + written per launch
		}
		t.part = part3
	default:
		return t.bad(t.line, "unknown part header")
	}
	t.found = true
	return nil
}

// row reads a result row of the current part; any other line (nsys output
// we do not know, stderr) ends the part.
func (t *transcript) row(s string) error {
	first := strings.Fields(s)[0]
	if first != "pageable" && first != "pinned" && first != "device-resident" && first != "zero-copy" {
		t.part = partNone
		return nil
	}
	switch t.part {
	case part1, part1b:
		return t.copyRow(s)
	case part2:
		return t.asyncRow(s)
	case part3:
		return t.kernelRow(s)
	}
	return t.bad(t.line, "a result row outside any part")
}

func (t *transcript) copyRow(s string) error {
	g := reCopyRow.FindStringSubmatch(s)
	if g == nil {
		return t.bad(t.line, "malformed copy row; want SOURCE N MiB X ms Y GB/s")
	}
	size, err := strconv.ParseInt(g[2], 10, 64)
	if err != nil || size <= 0 || size > 1<<30 {
		return t.bad(t.line, fmt.Sprintf("size %q MiB is not a positive whole number", g[2]))
	}
	v, err := t.nums([]bool{false, false}, g[3], "ms", g[4], "GB/s")
	if err != nil {
		return err
	}
	dir := "h2d"
	if t.part == part1b {
		dir = "d2h"
	}
	if err := t.dup(dir + " " + g[1] + " " + g[2] + " MiB"); err != nil {
		return err
	}
	t.m.Copies = append(t.m.Copies, CopyTiming{Direction: dir, Source: g[1], Bytes: size * mib, Ms: v[0], GBps: v[1]})
	return nil
}

func (t *transcript) asyncRow(s string) error {
	g := reAsyncRow.FindStringSubmatch(s)
	if g == nil {
		return t.bad(t.line, "malformed async row; want SOURCE call X ms completion Y ms call is Z%")
	}
	v, err := t.nums([]bool{true, false, true}, g[2], "call ms", g[3], "completion ms", g[4], "call share")
	if err != nil {
		return err
	}
	if err := t.dup("async " + g[1]); err != nil {
		return err
	}
	t.m.Async = append(t.m.Async, AsyncTiming{Source: g[1], Bytes: t.asyncBytes, CallMs: v[0], CompletionMs: v[1]})
	return nil
}

func (t *transcript) kernelRow(s string) error {
	g := reKernelRow.FindStringSubmatch(s)
	if g == nil {
		return t.bad(t.line, "malformed kernel row; want VARIANT X ms/launch Y GB/s")
	}
	v, err := t.nums([]bool{false, false}, g[2], "ms/launch", g[3], "GB/s")
	if err != nil {
		return err
	}
	if err := t.dup("kernel " + g[1]); err != nil {
		return err
	}
	b := t.kernelBytes
	if b == 0 {
		b = bytesFromRate(v[1], v[0])
	}
	t.m.Kernels = append(t.m.Kernels, KernelTiming{Variant: g[1], Bytes: b, MsPerLaunch: v[0], GBps: v[1]})
	return nil
}

// bytesFromRate infers part 3's bytes per launch from the printed rate and
// time, which the transcript rounds (3 decimals of ms, 1 of GB/s). The
// estimate is snapped to a power-of-two number of MiB when within 3% of one
// (the program's buffers are 64 MiB), else rounded to the nearest MiB.
func bytesFromRate(gbps, ms float64) int64 {
	est := gbps * 1e9 * ms * 1e-3 / mib // MiB
	if est < 0.5 || est > 1<<40 {
		return int64(math.Round(est * mib))
	}
	p := math.Exp2(math.Round(math.Log2(est)))
	if math.Abs(est-p) <= 0.03*p {
		return int64(p) * mib
	}
	return int64(math.Round(est)) * mib
}

// ---------------------------------------------------------------------------
// Measurements JSON

// ParseMeasurements decodes and validates JSON in the Measurements format;
// name is used in errors. GBps left at 0 is filled in from bytes and time.
func ParseMeasurements(r io.Reader, name string) (*Measurements, error) {
	hint := "see docs/measurements.md for the format"
	data, err := readMeasurementsJSON(r, name, hint)
	if err != nil {
		return nil, err
	}
	if e := inputerr.TextEncoding(data); e != nil {
		return nil, inputerr.NotUTF8(name, e, "write it again with the program (--json FILE), or by hand as docs/measurements.md shows")
	}
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	if k := DuplicateKey(data); k != "" {
		key := k[strings.LastIndexAny(k, ".]")+1:]
		return nil, &inputerr.Error{Path: name, Where: k, Problem: "the key " + strconv.Quote(key) + " appears twice in one object, so which value holds is unclear",
			Hint: "keep one of them; " + hint}
	}
	var m Measurements
	if k, f := MiscasedKey(data, &m); k != "" {
		return nil, &inputerr.Error{Path: name, Where: k, Problem: "keys are matched in their case, and this one is not " + strconv.Quote(f),
			Hint: "write " + strconv.Quote(f) + "; " + hint}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		where := ""
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		// The line of the byte the decoder stopped at: a field's path
		// (copies.ms) does not say which element of a list holds it.
		line := func(off int64) string {
			off = min(max(off-1, 0), int64(len(data)))
			return "line " + strconv.Itoa(1+bytes.Count(data[:off], []byte("\n")))
		}
		switch {
		case errors.As(err, &se):
			where = line(se.Offset) + ", byte " + strconv.FormatInt(se.Offset, 10)
		case errors.As(err, &te):
			where = line(te.Offset)
			if te.Field != "" {
				where = te.Field + " (" + where + ")"
			}
		}
		if err == io.EOF {
			return nil, &inputerr.Error{Path: name, Problem: "empty file, no JSON", Hint: hint}
		}
		return nil, &inputerr.Error{Path: name, Where: where, Problem: "not a valid measurements JSON", Err: err, Hint: hint}
	}
	if dec.More() {
		return nil, &inputerr.Error{Path: name, Problem: "more than one JSON value in the file", Hint: hint}
	}
	if m.Schema != Schema {
		found := strconv.Quote(m.Schema)
		if m.Schema == "" {
			found = "none"
		}
		return nil, &inputerr.Error{Path: name, Where: "schema", Problem: "schema is " + found + ", expected " + strconv.Quote(Schema), Hint: hint}
	}
	if err := validateMeasurements(&m); err != nil {
		return nil, &inputerr.Error{Path: name, Problem: err.problem, Hint: hint}
	}
	return &m, nil
}

// fieldError names the JSON path of an invalid value; problem starts with it.
type fieldError struct{ where, problem string }

func positive(v float64) bool { return v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }

// validateMeasurements checks every row and fills GB/s where it is 0.
// fieldErr is a field's problem, named by its JSON path.
func fieldErr(where, format string, a ...any) *fieldError {
	return &fieldError{where: where, problem: where + " " + fmt.Sprintf(format, a...)}
}

func validateMeasurements(m *Measurements) *fieldError {
	if m.PCIeGen < 0 || m.PCIeWidth < 0 {
		return fieldErr("pcieGen", "and pcieWidth must not be negative")
	}
	for _, check := range []func(*Measurements) *fieldError{validateCopies, validateAsync, validateKernels, validateRest} {
		if err := check(m); err != nil {
			return err
		}
	}
	return nil
}

// validateCopies checks part 1's rows and fills a missing GB/s.
func validateCopies(m *Measurements) *fieldError {
	fe := fieldErr
	seen := map[string]int{}
	for i := range m.Copies {
		c := &m.Copies[i]
		p := fmt.Sprintf("copies[%d]", i)
		if c.Direction != "h2d" && c.Direction != "d2h" {
			return fe(p+".direction", "must be \"h2d\" or \"d2h\", not %q", c.Direction)
		}
		if c.Source != "pageable" && c.Source != "pinned" {
			return fe(p+".source", "must be \"pageable\" or \"pinned\", not %q", c.Source)
		}
		if c.Bytes <= 0 {
			return fe(p+".bytes", "must be > 0")
		}
		if !positive(c.Ms) {
			return fe(p+".ms", "must be > 0")
		}
		if c.GBps < 0 || math.IsNaN(c.GBps) || math.IsInf(c.GBps, 0) {
			return fe(p+".gbps", "must be > 0 (or left out)")
		}
		if c.Runs < 0 {
			return fe(p+".runs", "must not be negative")
		}
		key := fmt.Sprintf("%s/%s/%d", c.Direction, c.Source, c.Bytes)
		if j, ok := seen[key]; ok {
			return fe(p, "repeats copies[%d] (%s %s %d bytes)", j, c.Direction, c.Source, c.Bytes)
		}
		seen[key] = i
		if c.GBps == 0 {
			c.GBps = float64(c.Bytes) / (c.Ms * 1e-3) / 1e9
		}
	}
	return nil
}

// validateAsync checks part 2's rows.
func validateAsync(m *Measurements) *fieldError {
	fe := fieldErr
	seen := map[string]int{}
	for i := range m.Async {
		a := &m.Async[i]
		p := fmt.Sprintf("async[%d]", i)
		if a.Source != "pageable" && a.Source != "pinned" {
			return fe(p+".source", "must be \"pageable\" or \"pinned\", not %q", a.Source)
		}
		if a.Bytes <= 0 {
			return fe(p+".bytes", "must be > 0")
		}
		if !positive(a.CallMs) {
			return fe(p+".callMs", "must be > 0")
		}
		if !positive(a.CompletionMs) {
			return fe(p+".completionMs", "must be > 0")
		}
		if a.CallMs > a.CompletionMs {
			return fe(p+".callMs", "(%g) must not exceed completionMs (%g): the call starts the copy", a.CallMs, a.CompletionMs)
		}
		if a.Runs < 0 {
			return fe(p+".runs", "must not be negative")
		}
		if j, ok := seen[a.Source]; ok {
			return fe(p, "repeats async[%d] (%s)", j, a.Source)
		}
		seen[a.Source] = i
	}
	return nil
}

// validateKernels checks part 3's rows and fills a missing GB/s.
func validateKernels(m *Measurements) *fieldError {
	fe := fieldErr
	seen := map[string]int{}
	for i := range m.Kernels {
		k := &m.Kernels[i]
		p := fmt.Sprintf("kernels[%d]", i)
		if k.Variant != "device-resident" && k.Variant != "zero-copy" {
			return fe(p+".variant", "must be \"device-resident\" or \"zero-copy\", not %q", k.Variant)
		}
		if k.Bytes <= 0 {
			return fe(p+".bytes", "must be > 0")
		}
		if !positive(k.MsPerLaunch) {
			return fe(p+".msPerLaunch", "must be > 0")
		}
		if k.GBps < 0 || math.IsNaN(k.GBps) || math.IsInf(k.GBps, 0) {
			return fe(p+".gbps", "must be > 0 (or left out)")
		}
		if k.Runs < 0 {
			return fe(p+".runs", "must not be negative")
		}
		if j, ok := seen[k.Variant]; ok {
			return fe(p, "repeats kernels[%d] (%s)", j, k.Variant)
		}
		seen[k.Variant] = i
		if k.GBps == 0 {
			k.GBps = float64(k.Bytes) / (k.MsPerLaunch * 1e-3) / 1e9
		}
	}
	return nil
}

// validateRest checks the per-call totals, the device copy rate and the
// correctness gates.
func validateRest(m *Measurements) *fieldError {
	fe := fieldErr
	if a := m.AsyncCalls; a != nil {
		if !positive(a.PageableMs) {
			return fe("asyncCalls.pageableMs", "must be > 0")
		}
		if !positive(a.PinnedMs) {
			return fe("asyncCalls.pinnedMs", "must be > 0")
		}
		if a.PageableCalls < 0 || a.PinnedCalls < 0 {
			return fe("asyncCalls", "call counts must not be negative")
		}
		if a.PageableBytes < 0 || a.PinnedBytes < 0 {
			return fe("asyncCalls", "bytes must not be negative")
		}
	}
	if m.DeviceCopyGBps < 0 || math.IsNaN(m.DeviceCopyGBps) || math.IsInf(m.DeviceCopyGBps, 0) {
		return fe("deviceCopyGBps", "must not be negative")
	}
	names := map[string]int{}
	for i, g := range m.Gates {
		p := fmt.Sprintf("gates[%d]", i)
		if strings.TrimSpace(g.Name) == "" {
			return fe(p+".name", "must not be empty")
		}
		name := strings.TrimSpace(g.Name)
		if j, ok := names[name]; ok {
			return fe(p, "repeats gates[%d] (%s): the program reports each gate once, so which of the two holds is unclear", j, name)
		}
		names[name] = i
	}
	if rows, gate := uncheckedRows(m); gate != "" {
		return fe("gates", "lack %q, the correctness gate that checks the timings of %s, where they hold the program's other gates: %s", gate, rows, uncheckedWhy)
	}
	return nil
}

// uncheckedRows finds, in a file that reports the program's correctness
// gates, rows that no gate it reports checks: the program checks each
// direction and source of its copies ("h2d-pinned copy-back") and each
// kernel variant ("kernel-zero-copy") before it prints their timings, and
// stops at a gate that fails, so rows without their gate beside the other
// gates come from an edited file or two runs' put together, and would be
// held unchecked. It returns the first such rows' words ("h2d pinned
// copies") and the gate missing; "" where there are none, or where the
// file reports no gate at all (a measurements file written by hand) or
// a gate that failed (its numbers are then untrusted whole, and the
// program stopped at it).
func uncheckedRows(m *Measurements) (rows, gate string) {
	if len(m.Gates) == 0 {
		return "", ""
	}
	have := make(map[string]bool, len(m.Gates))
	for _, g := range m.Gates {
		if !g.Passed {
			return "", ""
		}
		have[strings.TrimSpace(g.Name)] = true
	}
	for _, c := range m.Copies {
		if g := c.Direction + "-" + c.Source + " copy-back"; !have[g] {
			return c.Direction + " " + c.Source + " copies", g
		}
	}
	for _, k := range m.Kernels {
		if g := "kernel-" + k.Variant; !have[g] {
			return "the " + k.Variant + " kernel's launches", g
		}
	}
	return "", ""
}

// uncheckedWhy is why rows without their gate (uncheckedRows) are
// refused.
const uncheckedWhy = "an edited file, or two runs' output put together, whose timings cannot be held unchecked"

// MaxJSONDepth bounds how deeply the JSON files a user gives may nest
// objects and arrays: a measurements file nests three levels, an audit's
// JSON seven. Deeper input is refused before anything else reads it, so
// that no scan of it grows with its depth (a 30 MB file of brackets made
// the duplicate-key scan take 2.9 GB).
const MaxJSONDepth = 64

// TooDeep reports whether data nests objects and arrays more than
// MaxJSONDepth levels deep, and the byte offset where it first does. It
// reads data once, in constant memory, minding strings and their escapes;
// it does not check that data is valid JSON (the decoder does).
func TooDeep(data []byte) (offset int, deep bool) {
	var sh jsonShape
	if at := sh.scan(data, 0); at >= 0 && sh.deep {
		return at, true
	}
	return 0, false
}

// MaxJSONString bounds one string of a measurements file: the program
// writes names and versions of a few dozen bytes. A longer one is refused
// as it streams in, before the file is held, so that a string the size of
// the file is not held again by each reading of it.
const MaxJSONString = 64 << 10

// jsonShape follows a JSON stream byte by byte, in constant memory: how
// deeply it nests and how long its current string has run.
type jsonShape struct {
	depth, strLen    int
	inString, escape bool
	// deep and long say which bound the stream broke, once scan found it.
	deep, long bool
	// maxString bounds a string's bytes, 0 for no bound.
	maxString int
}

// scan follows data, which starts at byte from of the stream, and returns
// the stream's offset where it first nests deeper than MaxJSONDepth or a
// string runs past maxString, -1 while it does neither.
func (sh *jsonShape) scan(data []byte, from int) int {
	for i, b := range data {
		switch {
		case sh.inString:
			switch {
			case sh.escape:
				sh.escape = false
			case b == '\\':
				sh.escape = true
			case b == '"':
				sh.inString = false
				continue
			}
			if sh.strLen++; sh.maxString > 0 && sh.strLen > sh.maxString {
				sh.long = true
				return from + i
			}
		case b == '"':
			sh.inString, sh.strLen = true, 0
		case b == '{' || b == '[':
			if sh.depth++; sh.depth > MaxJSONDepth {
				sh.deep = true
				return from + i
			}
		case b == '}' || b == ']':
			sh.depth--
		}
	}
	return -1
}

// readMeasurementsJSON reads a measurements file of at most MaxFile bytes,
// stopping at the first byte that nests deeper than MaxJSONDepth or runs a
// string past MaxJSONString: such a file is refused with only what came
// before that byte held.
func readMeasurementsJSON(r io.Reader, name, hint string) ([]byte, error) {
	br := inputerr.Bounded(r, MaxFile, name, "a measurements file")
	sh := jsonShape{maxString: MaxJSONString}
	var data []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := br.Read(buf)
		if at := sh.scan(buf[:n], len(data)); at >= 0 {
			if sh.deep {
				return nil, DeepError(name, at, hint)
			}
			return nil, &inputerr.Error{Path: name, Where: "byte " + strconv.Itoa(at),
				Problem: fmt.Sprintf("a string longer than %d KiB: not a file nsyscheck reads", MaxJSONString>>10), Hint: hint}
		}
		data = append(data, buf[:n]...)
		switch {
		case err == io.EOF:
			return data, nil
		case inputerr.Is(err):
			return nil, err
		case err != nil:
			return nil, &inputerr.Error{Path: name, Problem: "cannot read the measurements", Err: err}
		}
	}
}

// HandWritten describes a small JSON file a user writes by hand (an --expect
// file) for DecodeHandWritten's errors.
type HandWritten struct {
	// Kind names the file ("an expected-audit file"); Want shows one.
	Kind, Want string
	// Deep says what such a file is, for one nested too deeply.
	Deep string
	// Twice is what a key given twice leaves unclear ("value holds"), Many
	// what more than one JSON value does ("expectation holds").
	Twice, Many string
}

// DecodeHandWritten decodes data, the file at path, into v, refusing what
// encoding/json would read in silence: nesting past MaxJSONDepth, a key
// given twice in one object, a key in another case than v's, a key v has
// no field for, and more than one JSON value, and a file saved as UTF-16
// or UTF-32. A leading UTF-8 byte-order mark is skipped.
func DecodeHandWritten(path string, data []byte, v any, f HandWritten) error {
	if e := inputerr.TextEncoding(data); e != nil {
		return inputerr.NotUTF8(path, e, "write it again in UTF-8")
	}
	if at, deep := TooDeep(data); deep {
		return DeepError(path, at, f.Deep)
	}
	if k := DuplicateKey(data); k != "" {
		return fmt.Errorf("%s: %s is given twice, so which %s is unclear; keep one", path, k, f.Twice)
	}
	if k, want := MiscasedKey(data, v); k != "" {
		return fmt.Errorf("%s: %s: keys are matched in their case; write %q", path, k, want)
	}
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: not %s (%v); want %s", path, f.Kind, err, f.Want)
	}
	if dec.More() {
		return fmt.Errorf("%s: more than one JSON value in the file, so which %s is unclear; keep one object", path, f.Many)
	}
	return nil
}

// DeepError is the problem of a JSON file nested too deeply (TooDeep).
func DeepError(path string, offset int, hint string) *inputerr.Error {
	return &inputerr.Error{Path: path, Where: "byte " + strconv.Itoa(offset),
		Problem: fmt.Sprintf("objects and arrays nested more than %d levels deep: not a file nsyscheck reads", MaxJSONDepth), Hint: hint}
}

// DuplicateKey returns the JSON path of the first object key that appears
// twice in one object of data ("copies[0].ms"), or "" when there is none or
// data is not valid JSON (the decoder reports that); for every JSON file a
// user gives (a measurements file, an --expect file), once TooDeep has
// passed it. encoding/json keeps the last of two equal keys without a
// word, so a file saying two things about one value would be read as
// whichever came last.
func DuplicateKey(data []byte) string {
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
				if len(stack) == MaxJSONDepth {
					return "" // TooDeep refuses it; nothing deeper is kept
				}
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
