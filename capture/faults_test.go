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
	"github.com/nsyscheck/nsyscheck/program"
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
			Program: &program.Measurements{Copies: []program.CopyTiming{{Direction: "h2d", Source: "pinned", Bytes: 1 << 20, Ms: 1e308, GBps: 1}}}},
			"h2d pinned copy", "1e+308 ms is impossible"},
		{"a T4's pinned copy at 428 GB/s, past its PCIe 3.0 x16", Capture{Format: FormatMeasurements,
			Program: &program.Measurements{GPU: "Tesla T4", Copies: []program.CopyTiming{{Direction: "h2d", Source: "pinned", Bytes: 256 << 20, Ms: 0.627, GBps: 428}}}},
			"h2d pinned copy", "impossible: 428 GB/s over a link of 15.75 GB/s (PCIe 3.0 x16 of the Tesla T4"},
		{"a GPU's own PCIe link said: Gen 2 x8", Capture{Format: FormatMeasurements,
			Program: &program.Measurements{GPU: "NVIDIA H200", PCIeGen: 2, PCIeWidth: 8, Copies: []program.CopyTiming{{Direction: "h2d", Source: "pinned", Bytes: 256 << 20, Ms: 4.84, GBps: 55.5}}}},
			"h2d pinned copy", "over a link of 4 GB/s (PCIe 2.0 x8 of NVIDIA H200, as the capture says"},
		{"measurements bandwidth of 1e9 GB/s", Capture{Format: FormatMeasurements,
			Program: &program.Measurements{Kernels: []program.KernelTiming{{Variant: "zero-copy", Bytes: 1 << 20, MsPerLaunch: 1, GBps: 1e9}}}},
			"kernel zero-copy", "impossible: 1e+09 GB/s over a link of 900 GB/s"},
		{"results JSON whose milliseconds are 1000 times its GB/s says", Capture{Format: FormatMeasurements,
			Program: &program.Measurements{Copies: []program.CopyTiming{{Direction: "h2d", Source: "pinned", Bytes: 1 << 28, Ms: 4859.376, GBps: 55.2407}}}},
			"h2d pinned copy of 268435456 bytes", "contradicts its own 268435456 bytes"},
		{"transcript rate 1e9 times its bytes and time", Capture{Format: FormatTranscript,
			Program: &program.Measurements{Copies: []program.CopyTiming{{Direction: "d2h", Source: "pageable", Bytes: 1 << 20, Ms: 0.110, GBps: 9.5e9}}}},
			"d2h pageable copy", "impossible: 9.5e+09 GB/s over a link of 450 GB/s (NVLink-C2C, the fastest host link there is"},
		{"a pinned copy time 1e9 times too short", Capture{Format: FormatMeasurements,
			Program: &program.Measurements{Copies: []program.CopyTiming{{Direction: "h2d", Source: "pinned", Bytes: 1 << 28, Ms: 4.859376e-9}}}},
			"h2d pinned copy", "GB/s over a link of 450 GB/s"},
		{"a device-resident kernel faster than any memory", Capture{Format: FormatTranscript,
			Program: &program.Measurements{Kernels: []program.KernelTiming{{Variant: "device-resident", Bytes: 1 << 27, MsPerLaunch: 1e-6, GBps: 1.3e8}}}},
			"kernel device-resident row", "GB/s from a memory of 1e+04 GB/s (above any GPU's memory"},
		{"NaN call time", Capture{Format: FormatMeasurements,
			Program: &program.Measurements{AsyncCalls: &program.AsyncCallTotals{PageableMs: math.NaN(), PinnedMs: 1}}},
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
		Ranges: []Range{{Start: 5, Open: true}}, Program: &program.Measurements{Copies: []program.CopyTiming{{Bytes: 1 << 20, Ms: 1, GBps: 1}}}}
	if err := validate(&ok); err != nil {
		t.Errorf("a plausible capture refused: %v", err)
	}
	// A T4's real pinned rate, and its zero-copy kernel's, which crosses
	// the link both ways (the lesson's 24.7 GB/s over PCIe 3.0 x16).
	t4 := Capture{Format: FormatMeasurements, Program: &program.Measurements{GPU: "Tesla T4",
		Copies:  []program.CopyTiming{{Direction: "h2d", Source: "pinned", Bytes: 256 << 20, Ms: 21.65, GBps: 12.4}},
		Kernels: []program.KernelTiming{{Variant: "zero-copy", Bytes: 1 << 26, MsPerLaunch: 2.717, GBps: 24.7}}}}
	if err := validate(&t4); err != nil {
		t.Errorf("a T4's real rates refused: %v", err)
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
