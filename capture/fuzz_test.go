package capture

import (
	"bytes"
	"github.com/nsyscheck/nsyscheck/internal/limits"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/fixture"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/program"
)

// checkPlausible fails on any number of m outside the plausible
// magnitudes that validate enforces, and on a rate that contradicts the
// bytes and time beside it by more than a factor of four.
func checkPlausible(t *testing.T, m *Measurements) {
	t.Helper()
	bad := func(ms, gbps float64, bytes int64) bool {
		return !(ms >= 0 && ms <= maxProgramMs) || !(gbps >= 0 && gbps <= limits.DeviceMemory(m.GPU).Max()) || bytes < 0 || bytes > maxBytes
	}
	contradicts := func(ms, gbps float64, bytes int64) bool {
		if ms <= printedMs || gbps <= 0 {
			return false
		}
		r := gbps * ms * 1e6 / float64(bytes)
		return r > 4 || r < 0.25
	}
	for _, c := range m.Copies {
		if bad(c.Ms, c.GBps, c.Bytes) || c.GBps > limits.HostLink(m.GPU, m.PCIeGen, m.PCIeWidth).Max() || contradicts(c.Ms, c.GBps, c.Bytes) {
			t.Fatalf("implausible copy accepted %+v", c)
		}
	}
	for _, k := range m.Kernels {
		if bad(k.MsPerLaunch, k.GBps, k.Bytes) || contradicts(k.MsPerLaunch, k.GBps, k.Bytes) {
			t.Fatalf("implausible kernel accepted %+v", k)
		}
	}
	for _, a := range m.Async {
		if bad(a.CallMs, 0, a.Bytes) || bad(a.CompletionMs, 0, 0) {
			t.Fatalf("implausible async row accepted %+v", a)
		}
	}
}

// FuzzTranscript feeds arbitrary text to the transcript parser.
func FuzzTranscript(f *testing.F) {
	fixture.Seed(f, refTranscript, pinnedTranscript)
	f.Add([]byte("Part 2: async call vs completion (64 MiB)\n pinned call 0.004 ms completion 1.2 ms call is 0.3%\n"))
	f.Add([]byte("Part 3: zero-copy (64 MiB)\n zero-copy 1.3 ms/launch 51.0 GB/s\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := program.ParseTranscript(bytes.NewReader(data), "fuzz.txt")
		if err == nil {
			err = validate(&Capture{Path: "fuzz.txt", Format: FormatTranscript, Program: m})
		}
		if err != nil {
			if !inputerr.Is(err) {
				t.Fatalf("error %T is not an *inputerr.Error: %v", err, err)
			}
			return
		}
		checkPlausible(t, m)
		for _, c := range m.Copies {
			if c.Bytes <= 0 || c.Ms <= 0 {
				t.Fatalf("bad copy %+v", c)
			}
		}
		for _, k := range m.Kernels {
			if k.MsPerLaunch <= 0 {
				t.Fatalf("bad kernel %+v", k)
			}
		}
	})
}

// FuzzMeasurements feeds arbitrary bytes to the measurements parser.
func FuzzMeasurements(f *testing.F) {
	fixture.Seed(f, lessonT4, pinnedResults)
	f.Add([]byte(`{"schema":"nsyscheck.measurements/v1","copies":[{"direction":"h2d","source":"pinned","bytes":1,"ms":1e-300}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := program.ParseMeasurements(bytes.NewReader(data), "fuzz.json")
		if err == nil {
			err = validate(&Capture{Path: "fuzz.json", Format: FormatMeasurements, Program: m})
		}
		if err != nil {
			if !inputerr.Is(err) {
				t.Fatalf("error %T is not an *inputerr.Error: %v", err, err)
			}
			return
		}
		checkPlausible(t, m)
		if m.Schema != MeasurementsSchema {
			t.Fatalf("schema %q accepted", m.Schema)
		}
		for _, c := range m.Copies {
			if c.Bytes <= 0 || !(c.Ms > 0) || !(c.GBps > 0) && c.GBps != 0 {
				t.Fatalf("bad copy accepted %+v", c)
			}
		}
	})
}
