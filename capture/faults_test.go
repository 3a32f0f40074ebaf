package capture

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// TestValidateEveryFormat gives validate the same impossible value in a
// capture of each format: every one is refused, naming where it is.
func TestValidateEveryFormat(t *testing.T) {
	cases := []struct {
		name  string
		c     Capture
		where string
		want  string
	}{
		{"call ends before it starts (SQLite)", Capture{Format: FormatSQLite,
			Calls: []APICall{{Name: "cudaMemcpyAsync", Start: 100, End: 50, CorrelationID: 7}}},
			"cudaMemcpyAsync, correlation id 7", "ends before it starts"},
		{"call ends before it starts (CSV row)", Capture{Format: FormatCSV,
			Calls: []APICall{{Name: "cudaMemcpy", Start: 100, End: 50, Row: 12}}},
			"data row 12", "ends before it starts"},
		{"negative kernel start", Capture{Format: FormatNsysRep,
			Kernels: []Kernel{{Name: "scaleCopy", Start: -146, End: -36, CorrelationID: 3}}},
			"kernel scaleCopy", "negative start time"},
		{"copy lasting years", Capture{Format: FormatSQLite,
			Memcpys: MemcpysOf(Memcpy{Kind: vocab.CopyHtoD, Start: 0, End: math.MaxInt64, CorrelationID: 1})},
			"memory copy HtoD", "more than a week"},
		{"negative copy size", Capture{Format: FormatSQLite,
			Memcpys: MemcpysOf(Memcpy{Kind: vocab.CopyHtoD, Start: 0, End: 10, Bytes: -1, CorrelationID: 1})},
			"memory copy HtoD", "impossible"},
		{"closed range ending before its start", Capture{Format: FormatSQLite,
			Ranges: []Range{{Name: "async-pinned", Start: 10, End: 5}}},
			"NVTX range async-pinned", "ends before it starts"},
		{"negative summary total", Capture{Format: FormatCSV,
			APISummary: []APISummary{{Name: "cudaMemcpy", TotalNs: -1, Calls: 1}}},
			"cudaMemcpy", "negative total time"},
		{"transcript row of 1e308 ms", Capture{Format: FormatTranscript,
			Program: &Measurements{Copies: []CopyTiming{{Direction: "h2d", Source: "pinned", Bytes: 1 << 20, Ms: 1e308, GBps: 1}}}},
			"h2d pinned copy", "1e+308 ms is impossible"},
		{"measurements bandwidth of 1e9 GB/s", Capture{Format: FormatMeasurements,
			Program: &Measurements{Kernels: []KernelTiming{{Variant: "zero-copy", Bytes: 1 << 20, MsPerLaunch: 1, GBps: 1e9}}}},
			"kernel zero-copy", "GB/s is impossible"},
		{"results JSON whose milliseconds are 1000 times its GB/s says", Capture{Format: FormatMeasurements,
			Program: &Measurements{Copies: []CopyTiming{{Direction: "h2d", Source: "pinned", Bytes: 1 << 28, Ms: 4859.376, GBps: 55.2407}}}},
			"h2d pinned copy of 268435456 bytes", "contradicts its own 268435456 bytes"},
		{"transcript rate 1e9 times its bytes and time", Capture{Format: FormatTranscript,
			Program: &Measurements{Copies: []CopyTiming{{Direction: "d2h", Source: "pageable", Bytes: 1 << 20, Ms: 0.110, GBps: 9.5e9}}}},
			"d2h pageable copy", "faster than any link between host and device"},
		{"a pinned copy time 1e9 times too short", Capture{Format: FormatMeasurements,
			Program: &Measurements{Copies: []CopyTiming{{Direction: "h2d", Source: "pinned", Bytes: 1 << 28, Ms: 4.859376e-9}}}},
			"h2d pinned copy", "faster than any link between host and device"},
		{"a device-resident kernel faster than any memory", Capture{Format: FormatTranscript,
			Program: &Measurements{Kernels: []KernelTiming{{Variant: "device-resident", Bytes: 1 << 27, MsPerLaunch: 1e-6, GBps: 1.3e8}}}},
			"kernel device-resident row", "faster than any GPU memory"},
		{"NaN call time", Capture{Format: FormatMeasurements,
			Program: &Measurements{AsyncCalls: &AsyncCallTotals{PageableMs: math.NaN(), PinnedMs: 1}}},
			"asyncCalls.pageableMs", "is impossible"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.Path = "in"
			err := validate(&tc.c)
			var ie *inputerr.Error
			if !errors.As(err, &ie) {
				t.Fatalf("validate = %v, want an *inputerr.Error", err)
			}
			if !strings.Contains(ie.Where, tc.where) || !strings.Contains(ie.Problem, tc.want) || ie.Hint == "" {
				t.Errorf("got %q, want where %q and problem %q with a hint", err, tc.where, tc.want)
			}
		})
	}
	ok := Capture{Format: FormatSQLite, Calls: []APICall{{Start: 0, End: 0}},
		Ranges: []Range{{Start: 5, Open: true}}, Program: &Measurements{Copies: []CopyTiming{{Bytes: 1 << 20, Ms: 1, GBps: 1}}}}
	if err := validate(&ok); err != nil {
		t.Errorf("a plausible capture refused: %v", err)
	}
}

// TestShippedCapturesValidate checks that every shipped capture passes the
// plausibility checks, whatever its format.
func TestShippedCapturesValidate(t *testing.T) {
	for _, p := range []string{"../testdata/captures/h200-pinned/pinned.sqlite", "../testdata/captures/h200-pinned",
		pinnedTranscript, pinnedResults, lessonT4, refCSV2025} {
		c, err := Load(p, Options{})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if err := validate(c); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestOpenRegular: a FIFO with no writer and a device are refused at once,
// saying what they are.
func TestOpenRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "x_cuda_api_trace.csv")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	for p, want := range map[string]string{fifo: "FIFO", "/dev/zero": "device", os.TempDir(): "folder"} {
		f, _, err := inputerr.Open(p)
		if err == nil {
			f.Close()
			t.Fatalf("%s opened", p)
		}
		if !inputerr.Is(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want it called a %s", p, err, want)
		}
	}
	for _, load := range []func(string) error{
		func(p string) error { _, err := LoadTranscript(p); return err },
		func(p string) error { _, err := LoadMeasurements(p); return err },
		func(p string) error { _, err := LoadSQLite(p, Options{}); return err },
		func(p string) error { _, err := Load(p, Options{}); return err },
		func(p string) error { _, err := LoadCSVDir(filepath.Dir(p), Options{}); return err },
	} {
		if err := load(fifo); err == nil || !strings.Contains(err.Error(), "FIFO") {
			t.Errorf("a FIFO loaded: %v", err)
		}
	}
}
