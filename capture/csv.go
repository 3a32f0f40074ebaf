package capture

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/gocarina/gocsv"

	"github.com/nsyscheck/nsyscheck/internal/csvheader"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

// FactMemSummary names the per-copy-kind totals of cuda_gpu_mem_time_sum and
// cuda_gpu_mem_size_sum (Capture.MemSummary). It is declared here rather than
// in model.go because only the CSV loader can lack it on its own.
const FactMemSummary Fact = "mem-summary"

// errEmptyReport marks a report file with no header at all: nsys writes an
// empty file when a report has nothing to say (e.g. nvtx_sum of a capture
// traced without NVTX).
var errEmptyReport = errors.New("empty report")

// csvSuffixes lists the accepted file-name suffixes, for messages.
func csvSuffixes() string { return nsysdb.ReportSuffixes() }

// matchCSVReport returns the report key and base name of a file name such as
// "ref_cuda_api_trace.csv", or ok false (nsysdb.MatchReport).
func matchCSVReport(file string) (key, base string, ok bool) { return nsysdb.MatchReport(file) }

// LoadCSVDir reads the `nsys stats --format csv` reports in dir: the API
// trace, the API, GPU-memory and NVTX summaries, and the per-record GPU
// trace (copies with bytes and memory kinds, kernels) and NVTX push/pop
// trace, under their current or their 2022-era report names. Reports are found by their "_<report>.csv"
// suffix whatever the base name; one base name per folder.
func LoadCSVDir(dir string, opts Options) (*Capture, error) {
	found, err := findCSVReports(dir)
	if err != nil {
		return nil, err
	}
	l := &csvDirLoad{dir: dir, found: found,
		c: &Capture{Path: dir, Format: FormatCSV, Sources: Sources{API: nsysdb.ReportAPITrace, NVTX: nsysdb.ReportNVTXSum}}}
	for _, step := range []func() error{func() error { return l.apiTrace(opts) }, l.apiSum, l.memSums, l.nvtxSum, l.traceReports} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	c := l.c
	if l.read == 0 {
		return nil, &inputerr.Error{Path: dir, Problem: "the reports " + strings.Join(c.Files, ", ") + " hold no data rows",
			Hint: "the capture may have traced nothing; profile with nsys profile -t cuda,nvtx"}
	}
	lackCSVFacts(c)
	c.Sort()
	if err := validate(c); err != nil {
		return nil, err
	}
	return c, nil
}

// lackCSVFacts records what no CSV report can give.
func lackCSVFacts(c *Capture) {
	c.Lack(FactProgram, "the CSV reports hold no program output; put the transcript or results JSON beside them")
}

// findCSVReports lists the known reports in dir by key, refusing a folder
// with none, with several captures' reports, or with a report twice.
func findCSVReports(dir string) (map[string][]string, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, &inputerr.Error{Path: dir, Problem: "cannot read the CSV folder", Err: err, Hint: "check the path"}
	}
	if !st.IsDir() {
		return nil, &inputerr.Error{Path: dir, Problem: "not a folder", Hint: "give the folder that holds the nsys stats CSV reports"}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, &inputerr.Error{Path: dir, Problem: "cannot list the CSV folder", Err: err}
	}
	found := map[string][]string{} // report key -> file names
	bases := map[string]bool{}
	var otherCSV []string
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		key, base, ok := matchCSVReport(e.Name())
		if !ok {
			if strings.HasSuffix(strings.ToLower(e.Name()), ".csv") {
				otherCSV = append(otherCSV, e.Name())
			}
			continue
		}
		found[key] = append(found[key], e.Name())
		bases[base] = true
	}
	if len(found) == 0 {
		problem := "no CSV files"
		if len(otherCSV) > 0 {
			problem = "no known nsys stats report among the CSV files " + strings.Join(otherCSV, ", ")
		}
		return nil, &inputerr.Error{Path: dir, Problem: problem,
			Hint: "expected files ending in " + csvSuffixes() +
				"; make them with nsys stats --report cuda_api_trace,cuda_api_sum,cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum,nvtx_sum,cuda_gpu_trace,nvtx_pushpop_trace --format csv --output BASE REPORT.nsys-rep"}
	}
	if len(bases) > 1 {
		var names []string
		for _, files := range found {
			names = append(names, files...)
		}
		sort.Strings(names)
		return nil, &inputerr.Error{Path: dir, Problem: "reports of several captures in one folder: " + strings.Join(names, ", "),
			Hint: "keep one capture's reports (one base name) per folder"}
	}
	for key, files := range found {
		if len(files) > 1 {
			sort.Strings(files)
			return nil, &inputerr.Error{Path: dir, Problem: "report " + key + " is there more than once: " + strings.Join(files, ", "),
				Hint: "keep one generation of the reports per folder"}
		}
	}
	return found, nil
}

// csvDirLoad holds the state of one LoadCSVDir call.
type csvDirLoad struct {
	dir   string
	found map[string][]string // report key -> file names
	c     *Capture
	read  int // reports that held at least one data row
}

// readReport reads the report key with readFile, which returns how many
// data rows it held; empty notes what an empty report leaves unknown.
func (l *csvDirLoad) readReport(key string, readFile func(p string) (int, error), empty func(p string)) error {
	p := filepath.Join(l.dir, l.found[key][0])
	n, err := readFile(p)
	if errors.Is(err, errEmptyReport) {
		empty(p)
	} else if err != nil {
		return err
	}
	l.c.Files = append(l.c.Files, p)
	if n > 0 {
		l.read++
	}
	return nil
}

func (l *csvDirLoad) apiTrace(opts Options) error {
	if _, ok := l.found[nsysdb.ReportAPITrace]; ok {
		err := l.readReport(nsysdb.ReportAPITrace, func(p string) (int, error) {
			l.c.Sources.API = filepath.Base(p)
			return loadAPITraceFile(p, opts, l.c)
		}, func(p string) {
			l.c.Lack(FactAPITrace, p+" is empty: nsys found no CUDA API calls to report")
			l.c.Lack(FactProcessScope, p+" is empty")
		})
		if err != nil {
			return err
		}
	} else {
		l.c.Lack(FactAPITrace, "no *_cuda_api_trace.csv in "+l.dir+
			"; make it with nsys stats --report cuda_api_trace --format csv --output BASE REPORT.nsys-rep")
		l.c.Lack(FactProcessScope, "no *_cuda_api_trace.csv in "+l.dir+", and only the trace gives process and thread ids")
	}
	return nil
}

func (l *csvDirLoad) apiSum() error {
	if _, ok := l.found[nsysdb.ReportAPISum]; ok {
		err := l.readReport(nsysdb.ReportAPISum, func(p string) (n int, err error) {
			l.c.APISummary, err = readAPISum(p)
			return len(l.c.APISummary), err
		}, func(p string) {
			l.c.Lack(FactAPISummary, p+" is empty: nsys found no CUDA API calls to report")
		})
		if err != nil {
			return err
		}
	} else {
		l.c.Lack(FactAPISummary, "no *_cuda_api_sum.csv in "+l.dir+
			"; make it with nsys stats --report cuda_api_sum --format csv --output BASE REPORT.nsys-rep")
	}
	return nil
}

func (l *csvDirLoad) memSums() error {
	var timeRows, sizeRows []MemSummary
	memEmpty := func(p string) {
		l.c.Lack(FactMemSummary, p+" is empty: nsys found no GPU memory operations to report")
	}
	if _, ok := l.found[nsysdb.ReportMemTimeSum]; ok {
		err := l.readReport(nsysdb.ReportMemTimeSum, func(p string) (n int, err error) {
			timeRows, err = readMemSum(p, false)
			return len(timeRows), err
		}, memEmpty)
		if err != nil {
			return err
		}
	}
	if _, ok := l.found[nsysdb.ReportMemSizeSum]; ok {
		err := l.readReport(nsysdb.ReportMemSizeSum, func(p string) (n int, err error) {
			sizeRows, err = readMemSum(p, true)
			return len(sizeRows), err
		}, memEmpty)
		if err != nil {
			return err
		}
	}
	l.c.MemSummary = csvMergeMemSummary(timeRows, sizeRows)
	switch {
	case l.found[nsysdb.ReportMemTimeSum] == nil && l.found[nsysdb.ReportMemSizeSum] == nil:
		l.c.Lack(FactMemSummary, "no *_cuda_gpu_mem_time_sum.csv or *_cuda_gpu_mem_size_sum.csv in "+l.dir+
			"; make them with nsys stats --report cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum --format csv --output BASE REPORT.nsys-rep")
	case l.found[nsysdb.ReportMemTimeSum] == nil:
		l.c.Lack(FactMemSummary, "no *_cuda_gpu_mem_time_sum.csv in "+l.dir+
			", so the copy totals have bytes but no times; make it with nsys stats --report cuda_gpu_mem_time_sum --format csv")
	case l.found[nsysdb.ReportMemSizeSum] == nil:
		l.c.Lack(FactMemSummary, "no *_cuda_gpu_mem_size_sum.csv in "+l.dir+
			", so the copy totals have times but no bytes; make it with nsys stats --report cuda_gpu_mem_size_sum --format csv")
	}
	return nil
}

func (l *csvDirLoad) nvtxSum() error {
	if _, ok := l.found[nsysdb.ReportNVTXSum]; ok {
		err := l.readReport(nsysdb.ReportNVTXSum, func(p string) (n int, err error) {
			l.c.RangeSummary, err = readNVTXSum(p)
			return len(l.c.RangeSummary), err
		}, func(p string) {
			l.c.Lack(FactNVTXSummary, p+" is empty: the capture holds no NVTX ranges (traced without -t nvtx?)")
		})
		if err != nil {
			return err
		}
	} else {
		l.c.Lack(FactNVTXSummary, "no *_nvtx_sum.csv in "+l.dir+
			"; make it with nsys stats --report nvtx_sum --format csv --output BASE REPORT.nsys-rep")
	}
	return nil
}

// ---------------------------------------------------------------------------
// Shared reading helpers

// csvBomReader strips a leading UTF-8 byte-order mark and bounds the length
// of a record (csvBound): every CSV report is read through it.
func csvBomReader(r io.Reader) io.Reader {
	br := bufio.NewReaderSize(&csvBound{r: r, max: maxCSVRecord, line: 1, recLine: 1}, 64<<10)
	if b, err := br.Peek(3); err == nil && bytes.Equal(b, []byte{0xEF, 0xBB, 0xBF}) {
		_, _ = br.Discard(3)
	}
	return br
}

// maxCSVRecord bounds one record of a report (a line, or the lines a quoted
// field spans): nsys writes records of a few hundred bytes, and a longer
// one means a damaged file, a missing quote or not a CSV report at all.
const maxCSVRecord = 1 << 20

// errCSVRecordTooLong is the error of a record longer than maxCSVRecord.
type errCSVRecordTooLong struct {
	line int // the line the record starts on
	max  int
}

func (e *errCSVRecordTooLong) Error() string {
	return fmt.Sprintf("the record starting on line %d is longer than %d KiB", e.line, e.max>>10)
}

// csvBound passes a CSV stream through, failing once a record (bytes from
// one record boundary to the next: a newline outside quotes) grows past max,
// so that a file of zero bytes, one without newlines or one with an
// unbalanced quote is refused after max bytes instead of read whole into
// memory. It looks at each byte once: chunks without a quote are handled by
// two vectorised searches.
type csvBound struct {
	r       io.Reader
	max     int
	run     int  // bytes since the last record boundary
	quoted  bool // inside a quoted field
	line    int  // current line, 1-based
	recLine int  // line the current record starts on
	err     error
}

func (b *csvBound) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.r.Read(p)
	chunk := p[:n]
	tooLong := false
	if !b.quoted && bytes.IndexByte(chunk, '"') < 0 {
		first := bytes.IndexByte(chunk, '\n')
		if first < 0 {
			b.run += n
		} else {
			// Records end at every newline: the longest is the first
			// (it continues the previous chunk's) or one inside.
			tooLong = b.run+first > b.max
			for rest := chunk[first+1:]; !tooLong; {
				b.line++
				i := bytes.IndexByte(rest, '\n')
				if i < 0 {
					b.recLine = b.line
					b.run = len(rest)
					break
				}
				tooLong = i > b.max
				if tooLong {
					b.recLine = b.line
				}
				rest = rest[i+1:]
			}
		}
	} else {
		for _, c := range chunk {
			switch c {
			case '"':
				b.quoted = !b.quoted
			case '\n':
				b.line++
				if !b.quoted {
					if b.run > b.max {
						tooLong = true
					} else {
						b.run = -1
						b.recLine = b.line
					}
				}
			}
			if tooLong {
				break
			}
			b.run++
		}
	}
	if tooLong || b.run > b.max {
		b.err = &errCSVRecordTooLong{line: b.recLine, max: b.max}
		return 0, b.err
	}
	return n, err
}

// csvParseNs parses a time value in the column's unit as whole nanoseconds.
// Integers take a fast path; decimals (e.g. --timeunit usec) are scaled.
func csvParseNs(s string, scale float64) (int64, error) {
	if scale == 1 {
		if v, err := strconv.ParseInt(s, 10, 64); err == nil {
			return v, nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || strings.ContainsAny(s, "xXpP_") {
		return 0, errors.New("not a number")
	}
	v := f * scale
	if math.Abs(v) > 9e18 {
		return 0, errors.New("out of range")
	}
	return int64(math.Round(v)), nil
}

// csvParseInt parses an integer column such as a count or an id.
func csvParseInt(s string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		// Some exports write counts as "12.0".
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 9e18 || strings.ContainsAny(s, "xXpP_") {
			return 0, errors.New("not an integer")
		}
		return int64(f), nil
	}
	return v, nil
}

func csvRowError(path string, row int, column, value, problem, hint string) *inputerr.Error {
	return &inputerr.Error{Path: path, Where: fmt.Sprintf("data row %d, column %q", row, column),
		Problem: fmt.Sprintf("%s: %q", problem, value), Hint: hint}
}

// csvReadError converts an encoding/csv error into an *inputerr.Error.
func csvReadError(path string, err error) *inputerr.Error {
	var long *errCSVRecordTooLong
	if errors.As(err, &long) {
		return &inputerr.Error{Path: path, Where: fmt.Sprintf("line %d", long.line), Problem: "malformed CSV", Err: long,
			Hint: "an nsys stats report has short lines; this one may hold an unbalanced quote, be damaged or not be a CSV report"}
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		row := pe.StartLine - 1
		if row < 1 {
			row = pe.Line - 1
		}
		where := fmt.Sprintf("line %d", pe.Line)
		if row >= 1 {
			where = fmt.Sprintf("data row %d (line %d)", row, pe.Line)
		} else {
			where = "header"
		}
		return &inputerr.Error{Path: path, Where: where, Problem: "malformed CSV", Err: pe.Err,
			Hint: "the file may be cut short or not be an nsys stats --format csv report"}
	}
	return &inputerr.Error{Path: path, Problem: "cannot read the CSV report", Err: err}
}

// ---------------------------------------------------------------------------
// cuda_api_trace: streamed

func loadAPITraceFile(path string, opts Options, c *Capture) (int, error) {
	f, _, err := inputerr.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	emit := func(call APICall) { c.Calls = append(c.Calls, call) }
	if opts.ProgramThread {
		// First pass: count the calls per thread; the second keeps the
		// program's thread. A report the first pass cannot read is read
		// whole, so that its error is the one a plain load gives.
		threads, err := countAPITraceThreads(f, opts)
		if _, serr := f.Seek(0, io.SeekStart); serr != nil {
			return 0, &inputerr.Error{Path: path, Problem: "cannot read the cuda_api_trace report", Err: serr}
		}
		if err == nil && len(threads) > 1 {
			me := threads[0]
			c.OtherThreads = threads[1:]
			emit = func(call APICall) {
				if call.PID == me.PID && call.TID == me.TID {
					c.Calls = append(c.Calls, call)
				}
			}
		}
	}
	scoped := true
	n, err := streamAPITrace(f, path, opts, emit, func(hasScope bool) { scoped = hasScope })
	if err != nil {
		return 0, err
	}
	if !scoped {
		c.Lack(FactProcessScope, path+" has no Pid/Tid columns")
	}
	return n, nil
}

// csvStripVersionBytes is stripAPIVersion on bytes.
func csvStripVersionBytes(name []byte) []byte {
	i := bytes.LastIndex(name, []byte("_v"))
	if i <= 0 || i+2 == len(name) {
		return name
	}
	for _, r := range name[i+2:] {
		if r < '0' || r > '9' {
			return name
		}
	}
	return name[:i]
}

// csvScanner splits CSV records the way encoding/csv.Reader reads them
// (comma-separated, RFC 4180 quotes, no lazy quotes, "\r\n" read as "\n",
// empty lines skipped) without making a string of every field. It reports
// input encoding/csv would reject as an error without detail.
type csvScanner struct {
	br     *bufio.Reader
	rec    []byte   // the current record, quotes undone in place
	fields [][]byte // the current record's fields, into rec
}

func newCSVScanner(r io.Reader) *csvScanner {
	br, ok := csvBomReader(r).(*bufio.Reader)
	if !ok {
		br = bufio.NewReader(r)
	}
	return &csvScanner{br: br}
}

var errCSVScan = errors.New("malformed CSV")

// readLine appends one line to s.rec, "\r\n" turned into "\n"; it returns
// io.EOF when there is nothing more to read.
func (s *csvScanner) readLine() error {
	n := len(s.rec)
	for {
		line, err := s.br.ReadSlice('\n')
		s.rec = append(s.rec, line...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && err != io.EOF {
			return err
		}
		if len(s.rec) == n {
			return io.EOF
		}
		if err == io.EOF && s.rec[len(s.rec)-1] != '\n' {
			s.rec = append(s.rec, '\n')
		}
		if k := len(s.rec); k-n >= 2 && s.rec[k-2] == '\r' {
			s.rec[k-2] = '\n'
			s.rec = s.rec[:k-1]
		}
		return nil
	}
}

// next returns the fields of the next record; they are valid until the
// next call.
func (s *csvScanner) next() ([][]byte, error) {
	s.rec = s.rec[:0]
	for {
		if err := s.readLine(); err != nil {
			return nil, err
		}
		if len(s.rec) > 1 {
			break
		}
		s.rec = s.rec[:0] // an empty line
	}
	// A record goes on over lines while a quoted field is open: while the
	// count of quotes is odd. Each line's quotes are counted once.
	quotes := bytes.Count(s.rec, []byte{'"'})
	for quotes%2 == 1 {
		n := len(s.rec)
		if err := s.readLine(); err != nil {
			if err == io.EOF {
				return nil, errCSVScan
			}
			return nil, err
		}
		quotes += bytes.Count(s.rec[n:], []byte{'"'})
	}
	rec := s.rec[:len(s.rec)-1] // without the final "\n"
	s.fields = s.fields[:0]
	pos := 0
	for {
		if pos < len(rec) && rec[pos] == '"' {
			pos++
			start, w := pos, pos // w: where the unquoted value is written
			for {
				i := bytes.IndexByte(rec[pos:], '"')
				if i < 0 {
					return nil, errCSVScan
				}
				w += copy(rec[w:], rec[pos:pos+i])
				pos += i + 1
				if pos < len(rec) && rec[pos] == '"' {
					rec[w] = '"'
					w++
					pos++
					continue
				}
				break
			}
			s.fields = append(s.fields, rec[start:w])
			if pos == len(rec) {
				return s.fields, nil
			}
			if rec[pos] != ',' {
				return nil, errCSVScan
			}
			pos++
			continue
		}
		i := bytes.IndexByte(rec[pos:], ',')
		end := len(rec)
		if i >= 0 {
			end = pos + i
		}
		f := rec[pos:end]
		if bytes.IndexByte(f, '"') >= 0 {
			return nil, errCSVScan
		}
		s.fields = append(s.fields, f)
		if i < 0 {
			return s.fields, nil
		}
		pos = end + 1
	}
}

// ---------------------------------------------------------------------------
// Summary reports: small, decoded with gocsv

// csvNum is a numeric cell decoded strictly (gocsv's own int and float
// conversions accept "", "0x10" and truncate "1.9").
type csvNum struct {
	raw string
	v   float64
}

// UnmarshalCSV implements gocsv.TypeUnmarshaller.
func (n *csvNum) UnmarshalCSV(s string) error {
	n.raw = s
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || strings.ContainsAny(s, "xXpP_") {
		return fmt.Errorf("not a number: %q", s)
	}
	n.v = f
	return nil
}

// csvCanonicalReader feeds gocsv a report whose header has been rewritten to
// canonical field keys, so one struct tag matches every header variant.
type csvCanonicalReader struct {
	rows [][]string
	pos  int
}

func (r *csvCanonicalReader) Read() ([]string, error) {
	if r.pos >= len(r.rows) {
		return nil, io.EOF
	}
	r.pos++
	return r.rows[r.pos-1], nil
}

func (r *csvCanonicalReader) ReadAll() ([][]string, error) {
	rows := r.rows[r.pos:]
	r.pos = len(r.rows)
	return rows, nil
}

// maxCSVSummary bounds a summary report, which is read whole: it has a row
// per API name, copy kind or range name, a few kilobytes.
const maxCSVSummary = 32 << 20

// csvReadSummary reads a small summary report into out (a pointer to a slice of
// structs tagged with canonical field keys) and returns the resolved header.
func csvReadSummary(path, report string, cols []nsysdb.ReportColumn, out any) (*csvheader.Header, int, error) {
	f, _, err := inputerr.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	cr := csv.NewReader(csvBomReader(inputerr.Bounded(f, maxCSVSummary, path, "an nsys stats "+report+" report")))
	rows, err := cr.ReadAll()
	if err != nil {
		var ie *inputerr.Error
		if errors.As(err, &ie) {
			return nil, 0, ie
		}
		return nil, 0, csvReadError(path, err)
	}
	if len(rows) == 0 {
		return nil, 0, errEmptyReport
	}
	rh, err := csvheader.Resolve(path, report, rows[0], cols)
	if err != nil {
		return nil, 0, err
	}
	canon := make([]string, len(rows[0]))
	for field, i := range rh.Index {
		canon[i] = field
	}
	for i := range canon {
		if canon[i] == "" {
			canon[i] = fmt.Sprintf("unused-%d", i)
		}
	}
	rows[0] = canon
	if len(rows) == 1 {
		return rh, 0, nil
	}
	if err := gocsv.UnmarshalCSV(&csvCanonicalReader{rows: rows}, out); err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			col := "?"
			if pe.Column >= 1 && pe.Column <= len(rh.Names) {
				col = rh.Names[pe.Column-1]
			}
			return nil, 0, &inputerr.Error{Path: path, Where: fmt.Sprintf("data row %d, column %q", pe.Line-1, col),
				Problem: "bad value", Err: pe.Err, Hint: "re-export the report with nsys stats --format csv"}
		}
		return nil, 0, &inputerr.Error{Path: path, Problem: "cannot decode the " + report + " report", Err: err}
	}
	return rh, len(rows) - 1, nil
}

// csvNsOf converts a decoded time cell to nanoseconds, checking its sign.
func csvNsOf(path string, rh *csvheader.Header, row int, field string, n csvNum) (int64, error) {
	col := rh.Names[rh.Index[field]]
	v := n.v * rh.Scale[field]
	if n.v < 0 || math.Abs(v) > 9e18 {
		return 0, csvRowError(path, row, col, n.raw, "time must be a non-negative number", "re-export the report with nsys stats --format csv")
	}
	return int64(math.Round(v)), nil
}

// csvCountOf converts a decoded count cell, checking it is a whole non-negative number.
func csvCountOf(path string, rh *csvheader.Header, row int, field string, n csvNum) (int64, error) {
	col := rh.Names[rh.Index[field]]
	if n.v < 0 || n.v != math.Trunc(n.v) || n.v > 9e18 {
		return 0, csvRowError(path, row, col, n.raw, "count must be a whole non-negative number", "re-export the report with nsys stats --format csv")
	}
	return int64(n.v), nil
}

type apiSumRow struct {
	Total csvNum  `csv:"total"`
	Calls csvNum  `csv:"calls"`
	Min   *csvNum `csv:"min"`
	Max   *csvNum `csv:"max"`
	Name  string  `csv:"name"`
}

func readAPISum(path string) ([]APISummary, error) {
	var rows []apiSumRow
	rh, _, err := csvReadSummary(path, nsysdb.ReportAPISum, nsysdb.APISumColumns, &rows)
	if err != nil {
		return nil, err
	}
	out := make([]APISummary, 0, len(rows))
	for i, r := range rows {
		s := APISummary{Name: stripAPIVersion(r.Name)}
		if s.TotalNs, err = csvNsOf(path, rh, i+1, "total", r.Total); err != nil {
			return nil, err
		}
		if s.Calls, err = csvCountOf(path, rh, i+1, "calls", r.Calls); err != nil {
			return nil, err
		}
		if r.Min != nil {
			if s.MinNs, err = csvNsOf(path, rh, i+1, "min", *r.Min); err != nil {
				return nil, err
			}
		}
		if r.Max != nil {
			if s.MaxNs, err = csvNsOf(path, rh, i+1, "max", *r.Max); err != nil {
				return nil, err
			}
		}
		out = append(out, s)
	}
	return out, nil
}

type memSumRow struct {
	Total csvNum `csv:"total"`
	Count csvNum `csv:"count"`
	Op    string `csv:"op"`
}

// csvCopyKindOf maps a report's operation name to a copy kind; ok is false for
// rows that are not copies (memsets).
func csvCopyKindOf(op string) (CopyKind, bool) { return nsysdb.ReportCopyKindOf(op) }

func readMemSum(path string, sizes bool) ([]MemSummary, error) {
	report, cols := nsysdb.ReportMemTimeSum, nsysdb.MemTimeColumns
	if sizes {
		report, cols = nsysdb.ReportMemSizeSum, nsysdb.MemSizeColumns
	}
	var rows []memSumRow
	rh, _, err := csvReadSummary(path, report, cols, &rows)
	if err != nil {
		return nil, err
	}
	mbScale := 1.0
	if sizes {
		var ok bool
		if mbScale, ok = csvheader.SizeScale(rh.Unit["total"]); !ok {
			return nil, &inputerr.Error{Path: path, Where: "column " + strconv.Quote(rh.Names[rh.Index["total"]]),
				Problem: "unknown size unit " + strconv.Quote(rh.Unit["total"]), Hint: "re-export with nsys stats --format csv"}
		}
	}
	var out []MemSummary
	at := map[CopyKind]int{}
	for i, r := range rows {
		kind, ok := csvCopyKindOf(r.Op)
		if !ok {
			continue
		}
		count, err := csvCountOf(path, rh, i+1, "count", r.Count)
		if err != nil {
			return nil, err
		}
		var ns int64
		var mb float64
		if sizes {
			if r.Total.v < 0 {
				return nil, csvRowError(path, i+1, rh.Names[rh.Index["total"]], r.Total.raw, "size must be a non-negative number", "re-export the report with nsys stats --format csv")
			}
			mb = r.Total.v * mbScale
		} else if ns, err = csvNsOf(path, rh, i+1, "total", r.Total); err != nil {
			return nil, err
		}
		j, seen := at[kind]
		if !seen {
			j = len(out)
			at[kind] = j
			out = append(out, MemSummary{Kind: kind})
		}
		out[j].Count += count
		out[j].TotalNs += ns
		out[j].TotalMB += mb
	}
	return out, nil
}

// csvMergeMemSummary joins the time and size reports by copy kind: counts and
// times from the time report, megabytes from the size report.
func csvMergeMemSummary(times, sizes []MemSummary) []MemSummary {
	out := append([]MemSummary(nil), times...)
	at := map[CopyKind]int{}
	for i, m := range out {
		at[m.Kind] = i
	}
	for _, s := range sizes {
		if i, ok := at[s.Kind]; ok {
			out[i].TotalMB = s.TotalMB
			continue
		}
		at[s.Kind] = len(out)
		out = append(out, MemSummary{Kind: s.Kind, Count: s.Count, TotalMB: s.TotalMB})
	}
	return out
}

type nvtxSumRow struct {
	Total     csvNum `csv:"total"`
	Instances csvNum `csv:"instances"`
	Range     string `csv:"range"`
}

// csvSplitRange splits nvtx_sum's "domain:name" ("":name for the default
// domain, written ":name" since nsys 2023 and "name" before).
func csvSplitRange(s string) (domain, name string) {
	if i := strings.IndexByte(s, ':'); i >= 0 {
		return s[:i], s[i+1:]
	}
	return "", s
}

func readNVTXSum(path string) ([]RangeSummary, error) {
	var rows []nvtxSumRow
	rh, _, err := csvReadSummary(path, nsysdb.ReportNVTXSum, nsysdb.NVTXSumColumns, &rows)
	if err != nil {
		return nil, err
	}
	out := make([]RangeSummary, 0, len(rows))
	for i, r := range rows {
		var s RangeSummary
		s.Domain, s.Name = csvSplitRange(r.Range)
		if s.TotalNs, err = csvNsOf(path, rh, i+1, "total", r.Total); err != nil {
			return nil, err
		}
		if s.Instances, err = csvCountOf(path, rh, i+1, "instances", r.Instances); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}
