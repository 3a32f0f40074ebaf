package capture

import (
	"bytes"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/fixture"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
)

// trainPageable is a shipped capture whose 140 HtoD copies are pageable.
var trainPageable = filepath.Join("..", "testdata", "captures", "train-pageable", "train-pageable.sqlite")

// csvFolderOf copies the CSV reports of a shipped capture's folder into a
// folder of their own, edit applied to each file's text.
func csvFolderOf(t *testing.T, dir string, edit func(name, text string) string) string {
	t.Helper()
	out := t.TempDir()
	csvs, err := filepath.Glob(filepath.Join(dir, "*.csv"))
	if err != nil || len(csvs) == 0 {
		t.Fatalf("no CSV reports in %s: %v", dir, err)
	}
	for _, p := range csvs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, filepath.Base(p)), []byte(edit(filepath.Base(p), string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// A host-device copy whose host memory kind the trace does not tell (NULL,
// or sides contrary to its direction) refuses the audit, counted and with
// the columns named: read as pinned, pageable copies would pass unseen.
func TestUnclassifiedHostMemory(t *testing.T) {
	if _, err := traceScan(t, trainPageable); err != nil {
		t.Fatalf("the shipped capture: %v", err)
	}
	csvDir := filepath.Dir(trainPageable)
	cases := []struct {
		name, path, want string
	}{
		{"srcKind NULL", fixture.SQLite(t, trainPageable, `UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET srcKind = NULL`),
			"207 of the 207 host-device copies have no host memory kind it can tell (srcKind/dstKind NULL"},
		{"HtoD from device to pageable memory", fixture.SQLite(t, trainPageable, `UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET srcKind = 2, dstKind = 0 WHERE copyKind = 1`),
			"140 of the 207 host-device copies have no host memory kind it can tell (srcKind/dstKind NULL, unknown or contrary to the copy's direction; the first: correlation id 149, HtoD from device to pageable memory)"},
		{"CSV with SrcMemKd and DstMemKd swapped", csvFolderOf(t, csvDir, func(name, text string) string {
			if strings.HasSuffix(name, "_cuda_gpu_trace.csv") {
				text = strings.Replace(text, "SrcMemKd,DstMemKd", "DstMemKd,SrcMemKd", 1)
			}
			return text
		}), "207 of the 207 host-device copies have no host memory kind it can tell (SrcMemKd/DstMemKd NULL"},
		// A trace that names no memory kind at all: every host-device copy
		// of unknown kind, once read as not pageable ("nothing to pin").
		{"no ENUM_CUDA_MEM_KIND table", fixture.SQLite(t, trainPageable, `DROP TABLE ENUM_CUDA_MEM_KIND`),
			"the trace names no memory kind of any copy (the export has no ENUM_CUDA_MEM_KIND table to name the memory kinds of copies), so whether its 207 host-device copies were pinned is unknown, not pinned"},
		{"CSV without SrcMemKd and DstMemKd", csvFolderOf(t, csvDir, func(name, text string) string {
			if strings.HasSuffix(name, "_cuda_gpu_trace.csv") {
				text = editColumn(t, editColumn(t, text, "SrcMemKd", true), "DstMemKd", true)
			}
			return text
		}), "has no SrcMemKd/DstMemKd columns), so whether its 207 host-device copies were pinned is unknown, not pinned"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := traceScan(t, tc.path)
			var ie *inputerr.Error
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), "the audit is unavailable: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want a refusal with %q", err, tc.want)
			}
		})
	}
}

// A CSV folder without its *_cuda_api_trace.csv refuses the audit naming
// the missing report, not a damaged globalPid.
func TestNoAPITraceReport(t *testing.T) {
	dir := csvFolderOf(t, filepath.Dir(trainPageable), func(_, text string) string { return text })
	if err := os.Remove(filepath.Join(dir, "train-pageable_cuda_api_trace.csv")); err != nil {
		t.Fatal(err)
	}
	_, err := traceScan(t, dir)
	if err == nil || !strings.Contains(err.Error(), "the audit is unavailable: the 207 copies join no API call, since the capture holds none (no *_cuda_api_trace.csv in "+dir) ||
		strings.Contains(err.Error(), "globalPid") {
		t.Errorf("got %v", err)
	}
}

// editColumn rewrites a CSV report's text with the column named col blank
// in every copy row (drop false) or gone (drop true).
func editColumn(t *testing.T, text, col string, drop bool) string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.Index(recs[0], col)
	if i < 0 {
		t.Fatalf("no column %q in %v", col, recs[0])
	}
	for j, r := range recs {
		switch {
		case drop:
			recs[j] = slices.Delete(r, i, i+1)
		case j > 0 && strings.Contains(r[len(r)-1], "memcpy"):
			r[i] = ""
		}
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	if err := w.WriteAll(recs); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Copies of a CSV folder whose sizes are blank or whose Bytes column is
// gone are refused, naming the row and column or the missing column: their
// sizes are unknown, not 0 MiB.
func TestCSVCopiesWithoutSizes(t *testing.T) {
	for _, tc := range []struct {
		name string
		drop bool
		want string
	}{
		{"Bytes (MB) blank on every copy", false, `train-pageable_cuda_gpu_trace.csv: data row 1, column "Bytes (MB)": blank, where nsys writes every copy's size`},
		{"Bytes (MB) removed", true, "the audit is unavailable: the 207 copies have no size ("},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := csvFolderOf(t, filepath.Dir(trainPageable), func(name, text string) string {
				if strings.HasSuffix(name, "_cuda_gpu_trace.csv") {
					return editColumn(t, text, "Bytes (MB)", tc.drop)
				}
				return text
			})
			if _, err := traceScan(t, dir); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("audit: %v, want %q", err, tc.want)
			}
		})
	}
}
