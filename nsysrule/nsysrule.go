// Package nsysrule reads what NVIDIA's cuda_memcpy_async expert rule says
// about a capture: the CSV that nsys analyze writes, one row per
// asynchronous copy whose host side is pageable memory, with its columns
// matched through internal/nsysdb's aliases; runs the rule on an export
// with no row limit; and applies the rule's definition to the records a
// reader streams (scan.go), so that its answer is had without nsys.
package nsysrule

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/csvheader"
	"github.com/nsyscheck/nsyscheck/internal/environ"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsys"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/internal/regular"
)

// Name is the Nsight Systems expert rule that lists asynchronous copies
// whose host side is pageable memory.
const Name = "cuda_memcpy_async"

// AllArg runs the rule with no row limit (by default it lists 50).
const AllArg = Name + ":rows=-1"

// DefaultRows is how many copies the rule lists when not told otherwise; a
// CSV of exactly that many rows was probably cut short.
const DefaultRows = 50

// fileSuffix ends the name of the rule's CSV beside a capture
// (NAME_cuda_memcpy_async.csv).
const fileSuffix = "_" + Name + ".csv"

// FlaggedCopy is one row of the rule's output.
type FlaggedCopy struct {
	Start    int64   `json:"start"`
	Duration int64   `json:"duration"`
	SrcKind  string  `json:"srcKind"`
	DstKind  string  `json:"dstKind"`
	MB       float64 `json:"mb"`
	PID      int64   `json:"pid"`
	API      string  `json:"api"`
	// Sized says the row gives the copy's size (a CSV without its size
	// column, or a blank cell, gives none: MB is 0 then).
	Sized bool `json:"-"`
}

// maxFile bounds the rule's CSV: a row per flagged copy, a few hundred
// bytes each.
const maxFile = 1 << 30

// ReadCSV reads the CSV the rule writes. A rule that found nothing may
// write an empty file, which gives no rows.
func ReadCSV(path string) ([]FlaggedCopy, error) {
	rows := []FlaggedCopy{}
	err := EachCSV(path, func(f FlaggedCopy) error {
		rows = append(rows, f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// EachCSV streams the rows of the CSV the rule writes to yield, one record
// at a time in the file's order (a few hundred bytes held, however many
// rows); an error of yield stops it and is returned.
func EachCSV(path string, yield func(FlaggedCopy) error) error {
	f, info, err := regular.Open(path)
	if err == nil && info.Size() > maxFile {
		f.Close()
		err = &regular.TooLargeError{Path: path, Max: maxFile}
	}
	if err != nil {
		return fmt.Errorf("read the %s rule's output: %w", Name, err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(io.LimitReader(f, maxFile), 1<<16)
	if e := inputerr.StartText(br); e != nil {
		// Read as UTF-8, every other byte is zero: its columns would be
		// named as garbage.
		return inputerr.NotUTF8(path, e, "make the report again with nsys stats --report "+Name+" --format csv")
	}
	cr := csv.NewReader(br)
	cr.ReuseRecord = true
	header, err := cr.Read()
	switch {
	case errors.Is(err, io.EOF):
		return nil // an empty file: no rows
	case err != nil:
		return fmt.Errorf("%s: cannot read the %s rule's CSV: %w", path, Name, err)
	}
	if len(header) == 1 && strings.TrimSpace(header[0]) == "" {
		return nil
	}
	h, err := csvheader.Resolve(path, Name, slices.Clone(header), nsysdb.RuleColumns)
	if err != nil {
		return err
	}
	cs := columnsOf(h)
	var tw twins
	for i := 1; ; i++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: cannot read the %s rule's CSV: %w", path, Name, err)
		}
		fc, err := readRow(&cs, rec)
		if err != nil {
			return fmt.Errorf("%s: data row %d: cannot read the %s rule's CSV: %w", path, i, Name, err)
		}
		if tw.repeats(fc) {
			continue
		}
		if err := yield(fc); err != nil {
			return err
		}
	}
}

// columns are a header's columns as readRow takes them, looked up once:
// each field's index (-1 where the header has none) and, for the times
// and the size, the factor to nanoseconds or megabytes.
type columns struct {
	h                                     *csvheader.Header
	start, duration, pid, bytes           int
	srcKind, dstKind, api                 int
	startScale, durationScale, bytesScale float64
	bytesUnitKnown                        bool
}

// columnsOf looks h's fields up once for readRow.
func columnsOf(h *csvheader.Header) columns {
	at := func(field string) int {
		if i, ok := h.Index[field]; ok {
			return i
		}
		return -1
	}
	c := columns{h: h, start: at("start"), duration: at("duration"), pid: at("pid"), bytes: at("bytes"),
		srcKind: at("srckind"), dstKind: at("dstkind"), api: at("api"),
		startScale: h.Scale["start"], durationScale: h.Scale["duration"]}
	c.bytesScale, c.bytesUnitKnown = csvheader.SizeScale(h.Unit["bytes"])
	return c
}

// readRow decodes one data row.
func readRow(cs *columns, rec []string) (FlaggedCopy, error) {
	var f FlaggedCopy
	cell := func(i int) string {
		if i < 0 {
			return ""
		}
		return strings.TrimSpace(rec[i])
	}
	ns := func(i int, scale float64) (int64, error) {
		c := cell(i)
		v, err := strconv.ParseFloat(c, 64)
		if err != nil || math.IsNaN(v) || v < 0 || math.IsInf(v, 0) || v*scale > 9e18 {
			return 0, fmt.Errorf("column %q: %q is not a time", cs.h.Names[i], c)
		}
		return int64(math.Round(v * scale)), nil
	}
	var err error
	if f.Start, err = ns(cs.start, cs.startScale); err != nil {
		return f, err
	}
	if f.Duration, err = ns(cs.duration, cs.durationScale); err != nil {
		return f, err
	}
	c := cell(cs.pid)
	if f.PID, err = strconv.ParseInt(c, 10, 64); err != nil {
		return f, fmt.Errorf("column %q: %q is not a process id", cs.h.Names[cs.pid], c)
	}
	if c := cell(cs.bytes); cs.bytes >= 0 && c != "" {
		v, err := strconv.ParseFloat(c, 64)
		if !cs.bytesUnitKnown || err != nil || math.IsNaN(v) || v < 0 || math.IsInf(v, 0) {
			return f, fmt.Errorf("column %q: %q is not a size", cs.h.Names[cs.bytes], c)
		}
		f.MB, f.Sized = v*cs.bytesScale, true
	}
	f.SrcKind, f.DstKind, f.API = cell(cs.srcKind), cell(cs.dstKind), cell(cs.api)
	return f, nil
}

// Beside finds the rule's CSV beside a capture: NAME_cuda_memcpy_async.csv
// for a file NAME.* (one of exts, the capture's file name endings), or the
// one *_cuda_memcpy_async.csv in a folder; "" when there is none.
func Beside(path string, exts []string) string {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		if m, _ := filepath.Glob(filepath.Join(path, "*"+fileSuffix)); len(m) == 1 {
			return m[0]
		}
		return ""
	}
	name := filepath.Base(path)
	for _, ext := range exts {
		if strings.HasSuffix(strings.ToLower(name), ext) {
			p := filepath.Join(filepath.Dir(path), name[:len(name)-len(ext)]+fileSuffix)
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	return ""
}

// RunAll runs the rule with no row limit on an SQLite export, into a
// temporary folder that is removed afterwards, and reads what it flags.
// nsys runs in its own process group, stopped whole when ctx is cancelled.
func RunAll(ctx context.Context, nsysPath, db string) ([]FlaggedCopy, error) {
	a, err := Analyze(ctx, nsysPath, db, nil)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	return ReadCSV(a.CSV)
}

// Analysis is one run of the rule by nsys analyze: the CSV it wrote, in a
// temporary folder of its own until Close.
type Analysis struct {
	CSV string
	dir string
}

// Close removes the rule's CSV and its folder.
func (a *Analysis) Close() error { return os.RemoveAll(a.dir) }

// Analyze runs the rule with no row limit on an SQLite export into a
// temporary folder, which Close removes. nsys runs in its own process
// group, killed whole when ctx is cancelled, with the environment env
// (nil: the process's).
func Analyze(ctx context.Context, nsysPath, db string, env environ.Env) (*Analysis, error) {
	tmp, err := os.MkdirTemp("", "nsyscheck-analyze-")
	if err != nil {
		return nil, fmt.Errorf("nsys analyze: %w", err)
	}
	base := filepath.Join(tmp, "rule")
	// A stopped rule's CSV is removed unread: nsys is killed at once, so
	// one that ignores SIGTERM neither holds Ctrl-C up nor outlives
	// nsyscheck, and its folder is gone before nsyscheck exits.
	out, err := nsys.CombinedOutput(nsys.KillOnCancel(nsys.Command(ctx, "", env.List(), nsysPath, "analyze", "-r", AllArg, "--format", "csv", "-o", base, db)))
	if err != nil {
		os.RemoveAll(tmp)
		msg := strings.TrimSpace(string(out))
		if len(msg) > 300 {
			msg = "..." + msg[len(msg)-300:]
		}
		return nil, fmt.Errorf("nsys analyze failed (%v): %s", err, msg)
	}
	m, _ := filepath.Glob(filepath.Join(tmp, "*"+Name+"*.csv"))
	if len(m) == 0 {
		// A rule that found nothing still writes its (empty) CSV.
		os.RemoveAll(tmp)
		return nil, errors.New("nsys analyze wrote no CSV: " + strings.TrimSpace(string(out)))
	}
	return &Analysis{CSV: m[0], dir: tmp}, nil
}
