package predictions

import (
	"fmt"
	"sort"
	"strings"

	"github.com/nsyscheck/nsyscheck/vocab"
)

const mib = int64(1) << 20

// The bundled program's design (kernels/pinned.cu).
var (
	sweepSizes  = []int64{1 * mib, 4 * mib, 16 * mib, 64 * mib, 256 * mib}
	probeBytes  = 64 * mib // part 2's copy
	kernelBytes = 64 * mib // part 3's buffers; a launch reads and writes this much
)

const (
	warmups      = 3
	timedRuns    = 10
	perSize      = warmups + timedRuns // part 1 copies per size in a range
	asyncPerSrc  = 1 + timedRuns       // part 2: one warm-up then the timed calls
	asyncTotal   = 2 * asyncPerSrc     // cudaMemcpyAsync calls in the program
	launchPerVar = 1 + warmups + timedRuns
	launchTotal  = 2 * launchPerVar // scaleCopy launches in the program
	kernelName   = "scaleCopy"
)

var (
	sources  = []vocab.MemKind{vocab.MemPageable, vocab.MemPinned}
	variants = []vocab.Variant{vocab.DeviceResident, vocab.ZeroCopy}
)

// timing is a group of timed operations of one kind.
type timing struct {
	ms    float64   // mean milliseconds per operation
	runs  int       // operations averaged
	durMs []float64 // each operation's milliseconds (trace only)
	corr  []int64   // correlation ids (trace only)
	at    *Records  // where the records are, for evidence (trace only)
}

// sweepData is part 1 (h2d) or 1b (d2h) from one source.
type sweepData struct {
	dir      vocab.Direction
	sizes    []int64 // ascending; sizes present for both sources
	pageable map[int64]timing
	pinned   map[int64]timing
	how      string // how the rows were found, for evidence
	table    string // the table or CSV report the durations came from
}

func (s *sweepData) ratio(size int64) float64 {
	return s.pageable[size].ms / s.pinned[size].ms
}

func (s *sweepData) ratios() []float64 {
	out := make([]float64, len(s.sizes))
	for i, b := range s.sizes {
		out[i] = s.ratio(b)
	}
	return out
}

func (s *sweepData) has(size int64) bool {
	_, a := s.pageable[size]
	_, b := s.pinned[size]
	return a && b
}

// asyncSide is part 2 for one source.
type asyncSide struct {
	callMs       float64
	completionMs float64
	runs         int
	bytes        int64 // bytes per call, 0 when unknown
	totalBytes   int64 // bytes moved by the timed copies, 0 when unknown
	callDurMs    []float64
	corr         []int64
	at           *Records // where the calls are (trace only)
}

type asyncData struct {
	side  map[vocab.MemKind]*asyncSide
	how   string
	table string
}

// kernelData is part 3 from one source.
type kernelData struct {
	ms        map[vocab.Variant]timing // per variant
	bytes     int64                    // read + written per launch
	bytesFrom string
	how       string
	table     string
}

func (k *kernelData) gbps(variant vocab.Variant) float64 {
	return float64(k.bytes) / (k.ms[variant].ms * 1e-3) / 1e9
}

// callTotals is prediction 4's call time per group.
type callTotals struct {
	pageableMs, pinnedMs float64
	pageableN, pinnedN   int
	perCall              *CallDurations
	how                  string
	table                string
	recs                 []Records // the groups' calls (trace only)
}

// byteTotals is prediction 4's bytes per group.
type byteTotals struct {
	pageable, pinned int64
	perCopy          bool // bytes per copy (groups of different sizes), not totals
	how              string
	table            string
	recs             []Records // the groups' calls (trace only)
}

// sourceData is everything one source of numbers offers; a nil part comes
// with its reason.
type sourceData struct {
	name        string
	file        string // the program's numbers file, for evidence
	h2d, d2h    *sweepData
	h2dWhy      string
	d2hWhy      string
	async       *asyncData
	asyncWhy    string
	kern        *kernelData
	kernWhy     string
	calls       *callTotals
	callsWhy    string
	bytes       *byteTotals
	bytesWhy    string
	bytesShort  string // bytesWhy in a few words
	deviceGBps  float64
	deviceGBpsW string
}

// line is one evidence line of d: numbers read from table (a trace) or
// from d's file (the program's numbers), the records behind them, and the
// text formatted as fmt.Sprintf does.
func (d *sourceData) line(table string, recs []Records, format string, args ...any) Evidence {
	e := Evidence{Source: d.name, Text: fmt.Sprintf(format, args...), Records: recs}
	if d.file != "" {
		e.File = d.file
	} else {
		e.Table = table
	}
	return e
}

// recordsOf lists the records of timings that name theirs.
func recordsOf(ts ...*Records) []Records {
	var out []Records
	for _, t := range ts {
		if t != nil {
			out = append(out, *t)
		}
	}
	return out
}

func (d *sourceData) sweep(dir vocab.Direction) (*sweepData, string) {
	if dir == vocab.H2D {
		return d.h2d, d.h2dWhy
	}
	return d.d2h, d.d2hWhy
}

func sizeName(b int64) string {
	if b%mib == 0 {
		return fmt.Sprintf("%d MiB", b/mib)
	}
	return fmt.Sprintf("%d B", b)
}

func sizeList(bs []int64) string {
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = sizeName(b)
	}
	return strings.Join(parts, ", ")
}

// corrRecords is the group of records of table with the correlation ids
// ids, by their smallest and largest id; nil when there are none.
func corrRecords(group, table string, ids []int64) *Records {
	if len(ids) == 0 {
		return nil
	}
	s := append([]int64(nil), ids...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return &Records{Group: group, Table: table, Corr: &Span{First: s[0], Last: s[len(s)-1]}, Count: len(s)}
}

// corrSpan describes a list of correlation ids compactly.
func corrSpan(ids []int64) string {
	if r := corrRecords("", "", ids); r != nil {
		return r.String()
	}
	return ""
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func sum(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s
}

func gbps(bytes int64, ms float64) float64 { return float64(bytes) / (ms * 1e-3) / 1e9 }

func ptr(x float64) *float64 { return &x }
