package bigcapture

import (
	"bufio"
	"cmp"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

// report is one nsys stats CSV report ManyCopies repeats: the column its
// rows are placed by (a correlation id, else a time), the time columns
// shifted with them, and the range columns renumbered (nvtx_pushpop_trace).
type report struct {
	key          string // nsysdb report name, or the rule's
	place        string // column that places a row
	corr         bool   // place is a correlation id
	times        []string
	renumber     bool // RangeId and RangeStack count the output's ranges
	byDurationDn bool // the rule's order: longest first, then by start
}

var manyReports = []report{
	{key: nsysdb.ReportAPITrace, place: "CorrID", corr: true, times: []string{"Start (ns)"}},
	{key: nsysdb.ReportGPUTrace, place: "CorrId", corr: true, times: []string{"Start (ns)"}},
	{key: nsysdb.ReportNVTXTrace, place: "Start (ns)", times: []string{"Start (ns)", "End (ns)"}, renumber: true},
}

var ruleReport = report{key: "cuda_memcpy_async", place: "Start (ns)", times: []string{"Start (ns)"}, byDurationDn: true}

// writeCSV writes the CSV reports (and the rule's output) of the capture
// ManyCopies wrote, from the source's reports beside it.
func (m *many) writeCSV(n int) error {
	base := strings.TrimSuffix(m.cfg.Source, filepath.Ext(m.cfg.Source))
	var todo []struct {
		r       report
		in, out string
	}
	if m.cfg.CSV {
		m.res.CSVDir = filepath.Join(m.cfg.OutDir, m.cfg.Name+"-csv")
		if err := os.MkdirAll(m.res.CSVDir, 0o755); err != nil {
			return err
		}
		for _, r := range manyReports {
			todo = append(todo, struct {
				r       report
				in, out string
			}{r, base + "_" + r.key + ".csv", filepath.Join(m.res.CSVDir, m.cfg.Name+"_"+r.key+".csv")})
		}
	}
	if m.cfg.Rule {
		m.res.RuleCSV = filepath.Join(m.cfg.OutDir, m.cfg.Name+"_"+ruleReport.key+".csv")
		todo = append(todo, struct {
			r       report
			in, out string
		}{ruleReport, base + "_" + ruleReport.key + ".csv", m.res.RuleCSV})
	}
	for _, t := range todo {
		if err := m.repeatCSV(t.r, t.in, t.out); err != nil {
			return fmt.Errorf("bigcapture: %s: %w", t.in, err)
		}
	}
	return nil
}

// repeatCSV writes one report: the source's rows before the batches, each
// output batch's rows from its source batch shifted, the rows after shifted
// past the last batch.
func (m *many) repeatCSV(r report, in, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	cr := csv.NewReader(bufio.NewReader(f))
	cr.ReuseRecord = false
	rows, err := cr.ReadAll()
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("no header")
	}
	header := rows[0]
	col := func(name string) (int, error) {
		if i := slices.Index(header, name); i >= 0 {
			return i, nil
		}
		return -1, fmt.Errorf("no column %q", name)
	}
	place, err := col(r.place)
	if err != nil {
		return err
	}
	var times []int
	for _, t := range r.times {
		i, err := col(t)
		if err != nil {
			return err
		}
		times = append(times, i)
	}
	// Sort the source's rows into head, batches and tail.
	var head, tail [][]string
	body := make([][][]string, len(m.batches))
	first, last := m.batches[0], m.batches[len(m.batches)-1]
	for _, row := range rows[1:] {
		v, err := strconv.ParseInt(row[place], 10, 64)
		if err != nil {
			return fmt.Errorf("column %q: %w", r.place, err)
		}
		lo, hi := first.t0, last.t1
		if r.corr {
			lo, hi = first.c0, last.c1+1
		}
		switch {
		case v < lo:
			head = append(head, row)
		case v >= hi:
			tail = append(tail, row)
		default:
			b := slices.IndexFunc(m.batches, func(b batch) bool {
				if r.corr {
					return v >= b.c0 && v <= b.c1
				}
				return v >= b.t0 && v < b.t1
			})
			if b < 0 {
				return fmt.Errorf("row %v lies between two batches", row)
			}
			body[b] = append(body[b], row)
		}
	}
	w, err := os.Create(out)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := csv.NewWriter(bw)
	if err := cw.Write(header); err != nil {
		w.Close()
		return err
	}
	rangeID := 0
	emit := func(row []string, dt, dc int64) error {
		o := slices.Clone(row)
		for _, i := range times {
			if o[i] == "" {
				continue
			}
			v, err := strconv.ParseInt(o[i], 10, 64)
			if err != nil {
				return fmt.Errorf("column %q: %w", header[i], err)
			}
			o[i] = itoa(v + dt)
		}
		if r.corr {
			v, _ := strconv.ParseInt(o[place], 10, 64)
			o[place] = itoa(v + dc)
		}
		if r.renumber {
			rangeID++
			if err := renumberRange(header, o, rangeID); err != nil {
				return err
			}
		}
		return cw.Write(o)
	}
	var ruleRows [][]string
	if r.byDurationDn {
		emit = func(row []string, dt, dc int64) error {
			o := slices.Clone(row)
			for _, i := range times {
				v, err := strconv.ParseInt(o[i], 10, 64)
				if err != nil {
					return err
				}
				o[i] = itoa(v + dt)
			}
			ruleRows = append(ruleRows, o)
			return nil
		}
	}
	for _, row := range head {
		if err := emit(row, 0, 0); err != nil {
			return err
		}
	}
	for _, p := range m.plan {
		for _, row := range body[p.src] {
			if err := emit(row, p.dt, p.dc); err != nil {
				return err
			}
		}
	}
	for _, row := range tail {
		if err := emit(row, m.dt, m.dc); err != nil {
			return err
		}
	}
	if r.byDurationDn {
		dur, _ := col("Duration (ns)")
		num := func(s string) int64 { v, _ := strconv.ParseInt(s, 10, 64); return v }
		slices.SortStableFunc(ruleRows, func(a, b []string) int {
			return cmp.Or(-cmp.Compare(num(a[dur]), num(b[dur])), cmp.Compare(num(a[place]), num(b[place])))
		})
		if err := cw.WriteAll(ruleRows); err != nil {
			return err
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		w.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// renumberRange gives a top-level range of nvtx_pushpop_trace the id n:
// its RangeId and its RangeStack.
func renumberRange(header, row []string, n int) error {
	lvl := slices.Index(header, "Lvl")
	if lvl >= 0 && row[lvl] != "0" {
		return fmt.Errorf("a nested range (Lvl %s): only top-level ranges are renumbered", row[lvl])
	}
	for _, c := range []struct {
		name, val string
	}{{"RangeId", strconv.Itoa(n)}, {"RangeStack", ":" + strconv.Itoa(n)}} {
		if i := slices.Index(header, c.name); i >= 0 {
			row[i] = c.val
		}
	}
	return nil
}
