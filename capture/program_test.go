package capture

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/program"
	"github.com/nsyscheck/nsyscheck/records"
)

const (
	refTranscript    = "../testdata/reference/h200-ref/ref.transcript.txt"
	pinnedTranscript = "../testdata/captures/h200-pinned/pinned.transcript.txt"
	pinnedResults    = "../testdata/captures/h200-pinned/pinned.results.json"
	lessonT4         = "../testdata/measurements/lesson-t4.json"
)

func TestGoldenTranscript(t *testing.T) {
	for _, tc := range []struct{ path, golden string }{
		{refTranscript, "transcript-ref.txt"},
		{pinnedTranscript, "transcript-h200-pinned.txt"},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			c, err := LoadTranscript(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			assertGolden(t, tc.golden, goldenSummary(c))
		})
	}
}

func TestGoldenMeasurements(t *testing.T) {
	for _, tc := range []struct{ path, golden string }{
		{lessonT4, "measurements-lesson-t4.txt"},
		{pinnedResults, "measurements-h200-pinned.txt"},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			c, err := LoadMeasurements(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			assertGolden(t, tc.golden, goldenSummary(c))
		})
	}
}

func TestTranscriptContent(t *testing.T) {
	c, err := LoadTranscript(pinnedTranscript)
	if err != nil {
		t.Fatal(err)
	}
	m := c.Program
	if c.Format != FormatTranscript || m.Schema != program.Schema {
		t.Errorf("format %s schema %s", c.Format, m.Schema)
	}
	if len(m.Copies) != 20 || len(m.Async) != 2 || len(m.Kernels) != 2 || len(m.Gates) != 6 {
		t.Fatalf("copies %d async %d kernels %d gates %d", len(m.Copies), len(m.Async), len(m.Kernels), len(m.Gates))
	}
	if m.GPU != "NVIDIA H200" || m.Driver != "13000" || m.CUDA != "13000" || c.Meta.CUDADriver != "13000" {
		t.Errorf("device: %q %q %q", m.GPU, m.Driver, m.CUDA)
	}
	if got := m.Copies[19]; got.Direction != "d2h" || got.Source != "pinned" || got.Bytes != 256<<20 || got.Ms != 4.862 {
		t.Errorf("last copy %+v", got)
	}
	if got := m.Async[1]; got.Source != "pinned" || got.Bytes != 64<<20 || got.CallMs != 0.004 || got.CompletionMs != 1.227 {
		t.Errorf("pinned async %+v", got)
	}
	if got := m.Kernels[0]; got.Bytes != 128<<20 || got.GBps != 3839.2 {
		t.Errorf("device-resident %+v", got)
	}
	if m.DeviceCopyGBps != 4181.6 {
		t.Errorf("device copy %v", m.DeviceCopyGBps)
	}
	if m.Gates[4].Name != "kernel-device-resident" || !m.Gates[4].Passed {
		t.Errorf("gate %+v", m.Gates[4])
	}
	for _, f := range []records.Fact{records.FactAPITrace, records.FactMemcpy, records.FactKernels, records.FactNVTX, records.FactCorrelation, records.FactMemoryKinds} {
		if c.Has(f) {
			t.Errorf("transcript claims %s", f)
		}
	}
	if !c.Has(records.FactProgram) {
		t.Error("transcript lacks program-numbers")
	}

	// The reference build prints part 3's rate over 64 MiB per launch; the
	// bytes follow the printed numbers.
	r, err := LoadTranscript(refTranscript)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Program.Kernels[1]; got.Variant != "zero-copy" || got.Bytes != 64<<20 {
		t.Errorf("ref zero-copy %+v", got)
	}
}

func TestTranscriptAgreesWithResults(t *testing.T) {
	tr, err := LoadTranscript(pinnedTranscript)
	if err != nil {
		t.Fatal(err)
	}
	js, err := LoadMeasurements(pinnedResults)
	if err != nil {
		t.Fatal(err)
	}
	a, b := tr.Program, js.Program
	if len(a.Copies) != len(b.Copies) || len(a.Kernels) != len(b.Kernels) {
		t.Fatal("different row counts")
	}
	near := func(x, y, tol float64) bool { return x-y <= tol && y-x <= tol }
	for i := range a.Copies {
		x, y := a.Copies[i], b.Copies[i]
		if x.Direction != y.Direction || x.Source != y.Source || x.Bytes != y.Bytes || !near(x.Ms, y.Ms, 0.0005) {
			t.Errorf("copy %d: transcript %+v, results %+v", i, x, y)
		}
	}
	for i := range a.Kernels {
		if a.Kernels[i].Bytes != b.Kernels[i].Bytes {
			t.Errorf("kernel %d bytes: transcript %d, results %d", i, a.Kernels[i].Bytes, b.Kernels[i].Bytes)
		}
	}
}

func TestTranscriptNoise(t *testing.T) {
	in := "Collecting data...\n" +
		"\r[1/1] [0%    ] x.nsys-rep\rPart 1: blocking H2D\n" +
		" pageable    1 MiB    0.088 ms   12.0 GB/s\r\n" +
		"WARNING: something nsys says\n" +
		"Generating '/tmp/nsys-report-1.qdstrm'\n"
	m, err := program.ParseTranscript(strings.NewReader(in), "t.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Copies) != 1 || m.Copies[0].Ms != 0.088 {
		t.Errorf("copies %+v", m.Copies)
	}
}

func TestTranscriptErrors(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		parts      []string
	}{
		{"no output", "Collecting data...\nGenerated:\n\tx.nsys-rep\n", []string{"t.txt", "no program output found"}},
		{"empty", "", []string{"t.txt", "no program output found"}},
		{"gate failed", "gate h2d-pinned copy-back FAILED: 3 of 8 bytes differ\n", []string{"t.txt", "no program output found", "h2d-pinned copy-back", "3 of 8 bytes differ"}},
		{"malformed row", "Part 1: blocking H2D\n pageable    1 MiB    abc ms   12.0 GB/s\n", []string{"t.txt", "line 2", `"abc"`}},
		{"malformed row shape", "Part 1: blocking H2D\n pageable    1 MiB    0.1 s\n", []string{"t.txt", "line 2", "malformed copy row"}},
		{"zero ms", "Part 1: blocking H2D\n pageable    1 MiB    0.000 ms   12.0 GB/s\n", []string{"t.txt", "line 2", "positive"}},
		{"malformed async", "Part 2: async call vs completion (64 MiB)\n pinned call x ms\n", []string{"t.txt", "line 2", "malformed async row"}},
		{"malformed kernel", "Part 3: zero-copy\n zero-copy 1.0 ms 3 GB/s\n", []string{"t.txt", "line 2", "malformed kernel row"}},
		{"row outside part", " pinned    1 MiB    0.030 ms   35.2 GB/s\n", []string{"t.txt", "line 1", "outside any part"}},
		{"duplicate row", "Part 1: blocking H2D\n pinned 1 MiB 0.030 ms 35.2 GB/s\n pinned 1 MiB 0.031 ms 35.0 GB/s\n", []string{"t.txt", "line 3", "line 2"}},
		{"unknown part", "Part 4: something else\n", []string{"t.txt", "line 1", "unknown part"}},
		{"bad device", "device: ???\n", []string{"t.txt", "line 1", "device line"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.txt")
			if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadTranscript(path)
			wantInputError(t, err, tc.parts...)
		})
	}
	_, err := LoadTranscript(filepath.Join(t.TempDir(), "missing.txt"))
	wantInputError(t, err, "missing.txt", "check the path")
}

func TestMeasurementsGBpsFilled(t *testing.T) {
	in := `{"schema":"nsyscheck.measurements/v1","copies":[{"direction":"h2d","source":"pinned","bytes":1000000000,"ms":100}],
	"kernels":[{"variant":"zero-copy","bytes":2000000000,"msPerLaunch":1000}]}`
	m, err := program.ParseMeasurements(strings.NewReader(in), "m.json")
	if err != nil {
		t.Fatal(err)
	}
	if m.Copies[0].GBps != 10 || m.Kernels[0].GBps != 2 {
		t.Errorf("GBps not filled: %+v %+v", m.Copies[0], m.Kernels[0])
	}
	c, err := LoadMeasurements(lessonT4)
	if err != nil {
		t.Fatal(err)
	}
	if c.Program.Copies[0].GBps != 3.5 {
		t.Errorf("published GB/s changed: %v", c.Program.Copies[0].GBps)
	}
	if c.Meta.Driver != "580.173.02" || c.Meta.GPU != "Tesla T4" {
		t.Errorf("meta %+v", c.Meta)
	}
	if c.Has(records.FactAPITrace) || c.Has(records.FactMemcpy) || !c.Has(records.FactProgram) {
		t.Errorf("missing %v", c.Missing)
	}
}

func TestMeasurementsErrors(t *testing.T) {
	const head = `{"schema":"nsyscheck.measurements/v1",`
	row := `{"direction":"h2d","source":"pinned","bytes":1048576,"ms":0.1}`
	for _, tc := range []struct {
		name, body string
		parts      []string
	}{
		{"bad schema", `{"schema":"nsyscheck.measurements/v0"}`, []string{"m.json", `"nsyscheck.measurements/v0"`, `expected "nsyscheck.measurements/v1"`}},
		{"no schema", `{}`, []string{"m.json", "schema is none"}},
		{"unknown field", head + `"copies":[],"colour":"red"}`, []string{"m.json", `unknown field "colour"`}},
		{"unknown nested field", head + `"copies":[{"direction":"h2d","source":"pinned","bytes":1,"ms":1,"msec":2}]}`, []string{"m.json", `"msec"`}},
		{"syntax", head + `"copies":[}`, []string{"m.json", "not a valid measurements JSON"}},
		{"wrong type", head + `"copies":[{"direction":"h2d","source":"pinned","bytes":"1","ms":1}]}`, []string{"m.json", "copies.bytes"}},
		{"empty", ``, []string{"m.json", "empty"}},
		{"two values", head + `"copies":[]} {}`, []string{"m.json", "more than one"}},
		{"direction", head + `"copies":[` + row + `,{"direction":"up","source":"pinned","bytes":1,"ms":1}]}`, []string{"m.json", "copies[1].direction", `"up"`}},
		{"source", head + `"copies":[{"direction":"h2d","source":"paged","bytes":1,"ms":1}]}`, []string{"m.json", "copies[0].source"}},
		{"ms", head + `"copies":[` + row + `,` + strings.Replace(row, "pinned", "pageable", 1) + `,` + strings.Replace(row, "h2d", "d2h", 1) + `,{"direction":"d2h","source":"pinned","bytes":1,"ms":0}]}`, []string{"m.json", "copies[3].ms must be > 0"}},
		{"bytes", head + `"copies":[{"direction":"h2d","source":"pinned","bytes":-1,"ms":1}]}`, []string{"m.json", "copies[0].bytes must be > 0"}},
		{"duplicate copy", head + `"copies":[` + row + `,` + row + `]}`, []string{"m.json", "copies[1]", "repeats copies[0]"}},
		{"variant", head + `"kernels":[{"variant":"mapped","bytes":1,"msPerLaunch":1}]}`, []string{"m.json", "kernels[0].variant"}},
		{"duplicate kernel", head + `"kernels":[{"variant":"zero-copy","bytes":1,"msPerLaunch":1},{"variant":"zero-copy","bytes":1,"msPerLaunch":2}]}`, []string{"m.json", "kernels[1]"}},
		{"async source", head + `"async":[{"source":"managed","bytes":1,"callMs":1,"completionMs":2}]}`, []string{"m.json", "async[0].source"}},
		{"async order", head + `"async":[{"source":"pinned","bytes":1,"callMs":3,"completionMs":2}]}`, []string{"m.json", "async[0].callMs"}},
		{"async calls", head + `"asyncCalls":{"pageableMs":0,"pinnedMs":1}}`, []string{"m.json", "asyncCalls.pageableMs"}},
		{"gate name", head + `"gates":[{"name":"","passed":true}]}`, []string{"m.json", "gates[0].name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.json")
			if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadMeasurements(path)
			wantInputError(t, err, tc.parts...)
		})
	}
}
