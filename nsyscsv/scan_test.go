package nsyscsv

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/fixture"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/records"
)

const (
	refCSV2025  = "../testdata/reference/h200-ref"
	traceHeader = "Start (ns),Duration (ns),Name,Result,CorrID,Pid,Tid,T-Pri,Thread Name\n"
)

// TestCSVBound: a record longer than maxCSVRecord is refused after that many
// bytes, naming the line it starts on; a long quoted record within the
// bound reads whole.
func TestCSVBound(t *testing.T) {
	header := "Start (ns),Duration (ns),Name,CorrID\n"
	big := header + "1,2,cudaFree,1\n" + `3,4,"` + strings.Repeat("x\n", maxCSVRecord/2) + `",2` + "\n"
	_, err := streamAPITrace(strings.NewReader(big), "t.csv", records.Selection{}, func(records.Call) {}, nil)
	var ie *inputerr.Error
	if !errors.As(err, &ie) || ie.Where != "line 3" || !strings.Contains(err.Error(), "longer than 1024 KiB") {
		t.Fatalf("err = %v, want a record too long from line 3", err)
	}
	// Zero bytes with no newline, read through a reader that counts.
	cr := &countingReader{r: io.LimitReader(zeroReader{}, 1<<30)}
	_, err = streamAPITrace(cr, "z.csv", records.Selection{}, func(records.Call) {}, nil)
	if !errors.As(err, &ie) || ie.Where != "line 1" {
		t.Fatalf("err = %v, want a record too long from line 1", err)
	}
	if cr.n > 2*maxCSVRecord {
		t.Errorf("read %d bytes before refusing, want about %d", cr.n, maxCSVRecord)
	}
	ok := header + `1,2,"` + strings.Repeat("y\n", 1000) + `",3` + "\n"
	r := csv.NewReader(csvBomReader(strings.NewReader(ok)))
	recs, err := r.ReadAll()
	if err != nil || len(recs) != 2 || len(recs[1][2]) != 2000 {
		t.Fatalf("a long quoted record within the bound: %d records, %v", len(recs), err)
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestCSVScannerQuotedLines: csvScanner reads a record whose quoted field
// spans many lines the way encoding/csv does.
func TestCSVScannerQuotedLines(t *testing.T) {
	data := "a,b\n" + `"` + strings.Repeat("line\n", 20000) + `",2` + "\n3,4\n"
	sc := newCSVScanner(strings.NewReader(data))
	var got [][]string
	for {
		rec, err := sc.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var row []string
		for _, f := range rec {
			row = append(row, string(f))
		}
		got = append(got, row)
	}
	want, err := csv.NewReader(strings.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || got[1][0] != want[1][0] || got[2][1] != "4" {
		t.Fatalf("scanner read %d records, encoding/csv %d", len(got), len(want))
	}
}

// BenchmarkCSVScannerQuotedLines scans one record whose quoted field spans
// 100k lines (an unbalanced quote near the top of a trace reads like this):
// the time grows with the bytes, not with lines × bytes.
func BenchmarkCSVScannerQuotedLines(b *testing.B) {
	data := []byte("a,b\n\"" + strings.Repeat("cudaMemcpyAsync,1,2,3\n", 100000) + "\",2\n")
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		sc := newCSVScanner(bytes.NewReader(data))
		for {
			if _, err := sc.next(); err != nil {
				break
			}
		}
	}
}

// scanAll reads every record with csvScanner.
func scanAll(data []byte) ([][]string, error) {
	sc := newCSVScanner(bytes.NewReader(data))
	var out [][]string
	for {
		rec, err := sc.next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		row := make([]string, len(rec))
		for i, f := range rec {
			row[i] = string(f)
		}
		out = append(out, row)
	}
}

// csvAll reads every record with encoding/csv, the reference csvScanner
// (and so every per-record report reader) must agree with.
func csvAll(data []byte) ([][]string, error) {
	cr := csv.NewReader(csvBomReader(bytes.NewReader(data)))
	cr.FieldsPerRecord = -1
	var out [][]string
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, rec)
	}
}

// csvScanner must read what encoding/csv reads.
func checkScanner(t *testing.T, data []byte) {
	want, werr := csvAll(data)
	got, gerr := scanAll(data)
	if werr != nil {
		return // encoding/csv reports the error on the second pass
	}
	if gerr != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("input %q:\n got %q (%v)\nwant %q", data, got, gerr, want)
	}
}

func TestCSVScanner(t *testing.T) {
	for _, s := range []string{
		"", "\n", "a,b\n", "a,b", "a,b\r\n1,2\r\n", "\uFEFFa,b\n\n\n1,2\n", "a,,\n,,\n",
		`"a,b","c""d",e` + "\n", "\"multi\nline\",x\n\"y\r\nz\",w\r\n", "a,b\r", "\"\"\n", "a\rb,c\n",
		"\"a\"b,c\n", "a\"b,c\n", "\"open\n", "x,\"\"\"\"\n",
	} {
		checkScanner(t, []byte(s))
	}
	b, err := os.ReadFile("../testdata/captures/h200-pinned/pinned_cuda_api_trace.csv")
	if err != nil {
		t.Fatal(err)
	}
	checkScanner(t, b)
}

func FuzzCSVScanner(f *testing.F) {
	fixture.Seed(f, refCSV2025+"/ref_cuda_api_trace.csv")
	f.Add([]byte("\uFEFF" + traceHeader + "1,2,\"a,b\",0,1,2,3,20,\"t\"\"x\"\r\n"))
	f.Add([]byte("\"multi\nline\",x\n\"y\r\nz\",w\r\n\n"))
	f.Add([]byte("a,b\n\"" + strings.Repeat("l\n", 300) + "\",1\n"))
	f.Fuzz(func(t *testing.T, data []byte) { checkScanner(t, data) })
}

// FuzzCSVTrace feeds arbitrary bytes to the cuda_api_trace reader: it must
// never panic, and every error must be an *inputerr.Error.
func FuzzCSVTrace(f *testing.F) {
	fixture.Seed(f, refCSV2025+"/ref_cuda_api_trace.csv", "../testdata/captures/h200-pinned/pinned_cuda_api_trace.csv",
		"../testdata/captures/pipeline-backtrace/pipeline-backtrace_cuda_api_trace.csv")
	f.Add([]byte("\uFEFF" + traceHeader + "1,2,\"a,b\",0,1,2,3,20,\"t\"\"x\"\r\n"))
	f.Add([]byte("Start (us),Duration (us),Name,CorrID\n1.5,2e3,cudaFree_v1,1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var calls int
		_, err := csvStreamAPITraceForFuzz(data, func(c records.Call) {
			calls++
			if c.End < c.Start || c.Start < 0 {
				t.Fatalf("bad call %+v", c)
			}
		})
		if err != nil && !inputerr.Is(err) {
			t.Fatalf("error %T is not an *inputerr.Error: %v", err, err)
		}
	})
}

func csvStreamAPITraceForFuzz(data []byte, emit func(records.Call)) (int, error) {
	n, err := streamAPITrace(bytes.NewReader(data), "fuzz_cuda_api_trace.csv", records.Selection{}, emit, nil)
	if err == errEmptyReport {
		return n, nil
	}
	return n, err
}

func TestCSVBytes(t *testing.T) {
	for _, tc := range []struct {
		cell string
		want int64
	}{
		{"268.435", 256 << 20}, {"1.049", 1 << 20}, {"67.109", 64 << 20}, {"0.004", 4096},
		{"0.000", 0}, {"", 0}, {"1.5", 1500000}, // no single 4 KiB multiple within 1.45..1.55 MB
	} {
		got, err := csvBytes(tc.cell, 1)
		if err != nil || got != tc.want {
			t.Errorf("csvBytes(%q) = %d, %v; want %d", tc.cell, got, err, tc.want)
		}
	}
	if _, err := csvBytes("-1", 1); err == nil {
		t.Error("a negative size passed")
	}
}

func TestBaseKernelName(t *testing.T) {
	for in, want := range map[string]string{
		"<unnamed>::scaleCopy(float4 *, const float4 *, unsigned long, float)": "scaleCopy",
		"void at::native::vectorized_elementwise_kernel<(int)4, at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float>>, std::array<char *, (unsigned long)2>>(int, T2, T3)": "vectorized_elementwise_kernel",
		"scaleCopy": "scaleCopy",
	} {
		if got := baseKernelName(in); got != want {
			t.Errorf("baseKernelName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestStripVersionBytes: the CSV reader strips a name's _vNNNN suffix as
// nsysdb.StripAPIVersion does, on every name of a real report and on the
// odd ones.
func TestStripVersionBytes(t *testing.T) {
	names := []string{"cudaMemcpy_ptds_v7000", "cudaFoo_v", "cudaFoo_vx1", "_v12", "cuMemcpy_v2", "a_vx1"}
	var rows [][]string
	b, err := os.ReadFile("../testdata/captures/train-pinned/train-pinned_cuda_api_trace.csv")
	if err != nil {
		t.Fatal(err)
	}
	if rows, err = scanAll(b); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows[1:] {
		names = append(names, r[2])
	}
	for _, in := range names {
		if got, want := string(csvStripVersionBytes([]byte(in))), nsysdb.StripAPIVersion(in); got != want {
			t.Errorf("csvStripVersionBytes(%q) = %q, want %q", in, got, want)
		}
	}
}
