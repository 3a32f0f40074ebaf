package nsyscsv

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gocarina/gocsv"

	"github.com/nsyscheck/nsyscheck/internal/csvheader"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/internal/words"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// errEmptyReport marks a report file with no header at all: nsys writes an
// empty file when a report has nothing to say (e.g. nvtx_sum of a capture
// traced without NVTX).
var errEmptyReport = errors.New("empty report")

// BoundedReader reads a CSV report as every reader of one must: its
// leading byte-order mark stripped and each record bounded (a file of zero
// bytes, one without newlines or one with an unbalanced quote fails after
// 1 MiB instead of being read whole into memory).
func BoundedReader(r io.Reader) io.Reader { return csvBomReader(r) }

// csvBomReader strips a leading UTF-8 byte-order mark and bounds the length
// of a record (csvBound): every CSV report is read through it. A report
// saved as UTF-16 or UTF-32 (inputerr.TextEncoding) is not read: its
// first read fails with the *inputerr.EncodingError, for the caller to
// name the file (csvReadError).
func csvBomReader(r io.Reader) io.Reader {
	br := bufio.NewReaderSize(&csvBound{r: r, max: maxCSVRecord, line: 1, recLine: 1}, 64<<10)
	if e := inputerr.StartText(br); e != nil {
		return bufio.NewReader(failedReader{e})
	}
	return br
}

// failedReader fails every read with its error.
type failedReader struct{ err error }

func (f failedReader) Read([]byte) (int, error) { return 0, f.err }

// csvEncodingError names the report at path where err is a read of one
// saved in another encoding than UTF-8; nil otherwise.
func csvEncodingError(path string, err error) *inputerr.Error {
	var ee *inputerr.EncodingError
	if !errors.As(err, &ee) {
		return nil
	}
	return inputerr.NotUTF8(path, ee, "make the report again with nsys stats --format csv")
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
	if ee := csvEncodingError(path, err); ee != nil {
		return ee
	}
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

// csvStripVersionBytes is nsyssqlite.StripAPIVersion on bytes.
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
	// unended says the file's last line ends without its newline, which
	// nsys writes at the end of every line: the file is cut short.
	unended bool
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
			s.unended = true
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

// csvRowsDecoder hands gocsv a summary report a row at a time, its header
// rewritten to canonical field keys so one struct tag matches every header
// variant; once stop is set it ends the rows with errStopped. rows gets
// the line each row handed on starts on and its key (the fields of
// keyIdx), in order: gocsv reads the next row while the last is handled.
type csvRowsDecoder struct {
	header []string
	cr     *csv.Reader
	stop   bool
	keyIdx []int
	rows   chan csvRowAt
}

// csvRowAt is where a summary's row starts and what it sums (its key).
type csvRowAt struct {
	line int
	key  string
}

// errStopped ends a summary's rows once its consumer has failed on one.
var errStopped = errors.New("summary read stopped")

func (d *csvRowsDecoder) GetCSVRow() ([]string, error) {
	if d.header != nil {
		h := d.header
		d.header = nil
		return h, nil
	}
	if d.stop {
		return nil, errStopped
	}
	rec, err := d.cr.Read()
	if err == nil {
		line, _ := d.cr.FieldPos(0)
		d.rows <- csvRowAt{line: line, key: csvRowKey(rec, d.keyIdx)}
	}
	return rec, err
}

func (d *csvRowsDecoder) GetCSVRows() ([][]string, error) {
	return nil, errors.New("a summary report is read a row at a time")
}

// csvRowKey is the fields of rec at idx, each quoted, joined by ", ".
func csvRowKey(rec []string, idx []int) string {
	var b strings.Builder
	for i, j := range idx {
		if i > 0 {
			b.WriteString(", ")
		}
		if j < len(rec) {
			b.WriteString(strconv.Quote(rec[j]))
		}
	}
	return b.String()
}

// csvTail passes a report through, noting how many lines it holds and
// whether its last byte ends a line: nsys ends every line of a report
// with a newline, so a file whose last line does not end was cut short,
// maybe inside a row whose fields still parse.
type csvTail struct {
	r     io.Reader
	lines int // newlines read
	last  byte
	any   bool
}

func (t *csvTail) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		t.lines += bytes.Count(p[:n], []byte{'\n'})
		t.last, t.any = p[n-1], true
	}
	return n, err
}

// maxCSVSummary bounds a summary report: it has a row per API name, copy
// kind or range name, a few kilobytes. It is read a row at a time, so what
// it holds is what its consumer keeps of each row.
const maxCSVSummary = 32 << 20

// csvSummaryHint is what to do about a summary report that is damaged.
const csvSummaryHint = "make the report again with nsys stats --format csv"

// csvOpenSummary opens a summary report and reads its header: the CSV
// reader on its rows, the header resolved and the canonical field key of
// each column; errEmptyReport for a file of no header at all.
func csvOpenSummary(f io.Reader, path, report string, cols []nsysdb.ReportColumn) (*csv.Reader, *csvheader.Header, []string, error) {
	cr := csv.NewReader(csvBomReader(f))
	head, err := cr.Read()
	if err == io.EOF {
		return nil, nil, nil, errEmptyReport
	}
	if err != nil {
		return nil, nil, nil, csvSummaryReadError(path, err)
	}
	head = slices.Clone(head)
	rh, err := csvheader.Resolve(path, report, head, cols)
	if err != nil {
		return nil, nil, nil, err
	}
	canon := make([]string, len(head))
	for field, i := range rh.Index {
		canon[i] = field
	}
	for i := range canon {
		if canon[i] == "" {
			canon[i] = fmt.Sprintf("unused-%d", i)
		}
	}
	return cr, rh, canon, nil
}

// csvEachSummary reads a summary report a row at a time, decoding each
// into a T (a struct tagged with canonical field keys) and handing it to
// each with its 1-based data row and the line it starts on, and returns
// the resolved header; each's first error stops the read and is returned.
//
// keys are the fields that name what a row sums (an API; a copy kind; a
// range and its style), as the report writes them: nsys writes at most
// most rows of each (one; two of an API in a capture with call stacks,
// whose second row checkSums holds to the trace), so a name on more rows
// is refused, naming the lines, as is a
// report cut short (its last line without its newline) or one of a
// header and no row, which nsys never writes (a report with nothing to
// say is an empty file: errEmptyReport). The names are held as 64-bit
// hashes, 16 bytes a row, compared once the rows are read; rows of one
// hash are read again and compared as written before they are refused.
func csvEachSummary[T any](path, report string, cols []nsysdb.ReportColumn, keys []string, most int, each func(rh *csvheader.Header, row, line int, r *T) error) (*csvheader.Header, error) {
	f, _, err := inputerr.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tail := &csvTail{r: inputerr.Bounded(f, maxCSVSummary, path, "an nsys stats "+report+" report")}
	cr, rh, canon, err := csvOpenSummary(tail, path, report, cols)
	if err != nil {
		return nil, err
	}
	var keyIdx []int
	for _, k := range keys {
		if i, ok := rh.Index[k]; ok {
			keyIdx = append(keyIdx, i)
		}
	}
	dec := &csvRowsDecoder{header: canon, cr: cr, keyIdx: keyIdx, rows: make(chan csvRowAt, 2)}
	var (
		row      int
		consumed error
		seed     = maphash.MakeSeed()
		hashes   []csvRowHash // each row's key hashed, with its line
	)
	err = gocsv.UnmarshalDecoderToCallback(dec, func(r T) {
		at := <-dec.rows
		if consumed != nil {
			return
		}
		row++
		if len(keyIdx) > 0 {
			hashes = append(hashes, csvRowHash{h: maphash.String(seed, at.key), line: at.line})
		}
		if consumed = each(rh, row, at.line, &r); consumed != nil {
			dec.stop = true
		}
	})
	if consumed != nil {
		return nil, consumed
	}
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) && pe.Err != nil && !errors.Is(pe.Err, csv.ErrFieldCount) && !errors.Is(pe.Err, csv.ErrQuote) && !errors.Is(pe.Err, csv.ErrBareQuote) {
			col := "?"
			if pe.Column >= 1 && pe.Column <= len(rh.Names) {
				col = rh.Names[pe.Column-1]
			}
			return nil, &inputerr.Error{Path: path, Where: fmt.Sprintf("data row %d, column %q", pe.Line-1, col),
				Problem: "bad value", Err: pe.Err, Hint: "re-export the report with nsys stats --format csv"}
		}
		return nil, csvSummaryReadError(path, err)
	}
	if lines, key := csvRepeated(path, report, cols, keyIdx, hashes, most); lines != nil {
		return nil, &inputerr.Error{Path: path, Where: "lines " + csvLines(lines),
			Problem: fmt.Sprintf("%s is listed %s, where nsys writes %s, so which of them holds is unclear", key, csvTimes(len(lines)), csvRowsOfOne(most)),
			Hint:    "the report was edited, or two reports were joined; " + csvSummaryHint}
	}
	switch {
	case tail.any && tail.last != '\n':
		return nil, &inputerr.Error{Path: path, Where: fmt.Sprintf("line %d", tail.lines+1),
			Problem: "the last line ends without its newline, where nsys ends every line: the file is cut short, maybe inside a row, whose numbers then cannot be trusted",
			Hint:    "copy the report again, or " + csvSummaryHint}
	case row == 0:
		return nil, &inputerr.Error{Path: path, Where: "line 2",
			Problem: "the report has its header and no row, which nsys never writes (a report with nothing to say is an empty file): the file is cut short after its header, so what it sums is unknown, not none",
			Hint:    "copy the report again, or " + csvSummaryHint}
	}
	return rh, nil
}

// csvLines writes line numbers as "2 and 9", "2, 5 and 9".
func csvLines(lines []int) string {
	s := make([]string, len(lines))
	for i, l := range lines {
		s[i] = strconv.Itoa(l)
	}
	return words.List(s)
}

// csvTimes says n times in words: "twice", "3 times".
func csvTimes(n int) string {
	if n == 2 {
		return "twice"
	}
	return strconv.Itoa(n) + " times"
}

// csvRowsOfOne says how many rows nsys writes of one name.
func csvRowsOfOne(most int) string {
	if most == 1 {
		return "one row of each"
	}
	return fmt.Sprintf("at most %d rows of each", most)
}

// csvRowHash is a summary row's key hashed, and the line the row starts
// on: 16 bytes a row, where the rows themselves are not kept.
type csvRowHash struct {
	h    uint64
	line int
}

// csvRepeated finds a key the summary at path lists on more than most
// rows, from its rows' hashes: the lines of the first most+1 rows of it
// and the key, where the rows whose most+1-th row comes first are read
// again and hold one key as written; nil where there is none.
func csvRepeated(path, report string, cols []nsysdb.ReportColumn, keyIdx []int, hashes []csvRowHash, most int) ([]int, string) {
	slices.SortFunc(hashes, func(a, b csvRowHash) int { return cmp.Or(cmp.Compare(a.h, b.h), cmp.Compare(a.line, b.line)) })
	var runs [][]int // the first most+1 lines of each hash on more than most rows
	for i := 0; i < len(hashes); {
		j := i
		for j < len(hashes) && hashes[j].h == hashes[i].h {
			j++
		}
		if j-i > most {
			lines := make([]int, most+1)
			for k := range lines {
				lines[k] = hashes[i+k].line
			}
			runs = append(runs, lines)
		}
		i = j
	}
	slices.SortFunc(runs, func(a, b []int) int { return cmp.Compare(a[most], b[most]) })
	for _, lines := range runs {
		keys := csvSummaryKeysAt(path, report, cols, keyIdx, lines)
		same := len(keys) == len(lines)
		for _, k := range keys {
			same = same && k == keys[0]
		}
		if same {
			return lines, keys[0]
		}
	}
	return nil, ""
}

// csvSummaryKeysAt reads the summary at path again as far as the rows that
// start on lines (in order) and returns their keys (csvRowKey of keyIdx),
// fewer where it cannot.
func csvSummaryKeysAt(path, report string, cols []nsysdb.ReportColumn, keyIdx []int, lines []int) []string {
	f, _, err := inputerr.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	cr, _, _, err := csvOpenSummary(inputerr.Bounded(f, maxCSVSummary, path, "an nsys stats "+report+" report"), path, report, cols)
	if err != nil {
		return nil
	}
	var keys []string
	for len(keys) < len(lines) {
		rec, err := cr.Read()
		if err != nil {
			return keys
		}
		if l, _ := cr.FieldPos(0); l == lines[len(keys)] {
			keys = append(keys, csvRowKey(rec, keyIdx))
		}
	}
	return keys
}

// csvSummaryReadError is the error of a summary report the CSV reader
// could not read: the file's own (too long, unreadable) as it is, else
// the CSV's.
func csvSummaryReadError(path string, err error) error {
	if ee := csvEncodingError(path, err); ee != nil {
		return ee
	}
	var ie *inputerr.Error
	if errors.As(err, &ie) {
		return ie
	}
	return csvReadError(path, err)
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

func readAPISum(path string) ([]records.APISum, error) {
	var out []records.APISum
	_, err := csvEachSummary(path, nsysdb.ReportAPISum, nsysdb.APISumColumns, []string{"name"}, 2, func(rh *csvheader.Header, row, line int, r *apiSumRow) error {
		var err error
		s := records.APISum{Name: nsysdb.StripAPIVersion(r.Name), Line: line}
		if s.TotalNs, err = csvNsOf(path, rh, row, "total", r.Total); err != nil {
			return err
		}
		if s.Calls, err = csvCountOf(path, rh, row, "calls", r.Calls); err != nil {
			return err
		}
		if r.Min != nil {
			if s.MinNs, err = csvNsOf(path, rh, row, "min", *r.Min); err != nil {
				return err
			}
		}
		if r.Max != nil {
			if s.MaxNs, err = csvNsOf(path, rh, row, "max", *r.Max); err != nil {
				return err
			}
		}
		out = append(out, s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

type memSumRow struct {
	Total csvNum `csv:"total"`
	Count csvNum `csv:"count"`
	Op    string `csv:"op"`
}

func readMemSum(path string, sizes bool) ([]records.CopySum, error) {
	report, cols := nsysdb.ReportMemTimeSum, nsysdb.MemTimeColumns
	if sizes {
		report, cols = nsysdb.ReportMemSizeSum, nsysdb.MemSizeColumns
	}
	var (
		out     []records.CopySum
		at      = map[vocab.CopyKind]int{}
		mbScale = 1.0
		scaled  bool
	)
	_, err := csvEachSummary(path, report, cols, []string{"op"}, 1, func(rh *csvheader.Header, row, _ int, r *memSumRow) error {
		if sizes && !scaled {
			var ok bool
			if mbScale, ok = csvheader.SizeScale(rh.Unit["total"]); !ok {
				return &inputerr.Error{Path: path, Where: "column " + strconv.Quote(rh.Names[rh.Index["total"]]),
					Problem: "unknown size unit " + strconv.Quote(rh.Unit["total"]), Hint: "re-export with nsys stats --format csv"}
			}
			scaled = true
		}
		kind, ok := nsysdb.ReportCopyKindOf(r.Op)
		if !ok {
			return nil
		}
		count, err := csvCountOf(path, rh, row, "count", r.Count)
		if err != nil {
			return err
		}
		var ns int64
		var mb float64
		if sizes {
			if r.Total.v < 0 {
				return csvRowError(path, row, rh.Names[rh.Index["total"]], r.Total.raw, "size must be a non-negative number", "re-export the report with nsys stats --format csv")
			}
			mb = r.Total.v * mbScale
		} else if ns, err = csvNsOf(path, rh, row, "total", r.Total); err != nil {
			return err
		}
		j, seen := at[kind]
		if !seen {
			j = len(out)
			at[kind] = j
			out = append(out, records.CopySum{Kind: kind})
		}
		out[j].Count += count
		out[j].TotalNs += ns
		out[j].TotalMB += mb
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// csvMergeMemSummary joins the time and size reports by copy kind: counts and
// times from the time report, megabytes from the size report.
func csvMergeMemSummary(times, sizes []records.CopySum) []records.CopySum {
	out := append([]records.CopySum(nil), times...)
	at := map[vocab.CopyKind]int{}
	for i, m := range out {
		at[m.Kind] = i
	}
	for _, s := range sizes {
		if i, ok := at[s.Kind]; ok {
			out[i].TotalMB = s.TotalMB
			continue
		}
		at[s.Kind] = len(out)
		out = append(out, records.CopySum{Kind: s.Kind, Count: s.Count, TotalMB: s.TotalMB})
	}
	return out
}

type nvtxSumRow struct {
	Total     csvNum `csv:"total"`
	Instances csvNum `csv:"instances"`
	Range     string `csv:"range"`
	Style     string `csv:"style"`
}

// NVTXPushPop is nvtx_sum's Style of the ranges nvtx_pushpop_trace lists.
const nvtxPushPop = "PushPop"

// csvSplitRange splits nvtx_sum's "domain:name" ("":name for the default
// domain, written ":name" since nsys 2023 and "name" before).
func csvSplitRange(s string) (domain, name string) {
	if i := strings.IndexByte(s, ':'); i >= 0 {
		return s[:i], s[i+1:]
	}
	return "", s
}

// readNVTXSum reads nvtx_sum's rows, and which of them are push/pop
// ranges' (pushPop; none where the report has no Style column); with
// pushPopOnly, the push/pop ranges' rows alone, which are all a check
// against nvtx_pushpop_trace compares.
func readNVTXSum(path string, pushPopOnly bool) (out []records.RangeSum, pushPop []bool, err error) {
	_, err = csvEachSummary(path, nsysdb.ReportNVTXSum, nsysdb.NVTXSumColumns, []string{"range", "style"}, 1, func(rh *csvheader.Header, row, _ int, r *nvtxSumRow) error {
		_, styled := rh.Index["style"]
		if pushPopOnly && (!styled || r.Style != nvtxPushPop) {
			return nil
		}
		var (
			s   records.RangeSum
			err error
		)
		s.Domain, s.Name = csvSplitRange(r.Range)
		if s.TotalNs, err = csvNsOf(path, rh, row, "total", r.Total); err != nil {
			return err
		}
		if s.Instances, err = csvCountOf(path, rh, row, "instances", r.Instances); err != nil {
			return err
		}
		out, pushPop = append(out, s), append(pushPop, styled && r.Style == nvtxPushPop)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, pushPop, nil
}
