package program

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
)

// A correctness gate the shipped transcript or results file reports
// twice, with the same verdict or the other, is refused naming both
// lines (the transcript) or entries (the results file): the program
// reports each gate once, so which holds is unclear. The shipped files
// parse, their gates once each.
func TestGateTwiceRefused(t *testing.T) {
	const dir = "../testdata/captures/h200-pinned/"
	tr, err := os.ReadFile(dir + "pinned.transcript.txt")
	if err != nil {
		t.Fatal(err)
	}
	if m, err := ParseTranscript(strings.NewReader(string(tr)), "pinned.transcript.txt"); err != nil || len(m.Gates) != 6 {
		t.Fatalf("the shipped transcript: %v", err)
	}
	lines := strings.SplitAfter(string(tr), "\n")
	cases := []struct {
		name, add string
		at        int // the added line's index (0-based) among lines
		want      string
	}{
		{"the same gate ok twice", "gate h2d-pinned copy-back         ok\n", 33,
			`lines 3 and 34: the correctness gate "h2d-pinned copy-back" is reported twice (passed on line 3, passed on line 34)`},
		{"a gate ok, then FAILED", "gate kernel-zero-copy             FAILED: sum mismatch\n", len(lines) - 1,
			`the correctness gate "kernel-zero-copy" is reported twice (passed on line 34, failed on line `},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			edited := append(append(append([]string(nil), lines[:tc.at]...), tc.add), lines[tc.at:]...)
			_, err := ParseTranscript(strings.NewReader(strings.Join(edited, "")), "pinned.transcript.txt")
			var ie *inputerr.Error
			if !errors.As(err, &ie) || ie.Path != "pinned.transcript.txt" || !strings.Contains(ie.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}

	js, err := os.ReadFile(dir + "pinned.results.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseMeasurements(strings.NewReader(string(js)), "pinned.results.json"); err != nil {
		t.Fatalf("the shipped results file: %v", err)
	}
	first := `{"name": "h2d-pageable copy-back", "passed": true, "detail": ""},`
	if !strings.Contains(string(js), first) {
		t.Fatalf("the shipped results file holds no %s", first)
	}
	twice := strings.Replace(string(js), first, first+"\n    "+`{"name": "h2d-pageable copy-back", "passed": false, "detail": "byte 5 differs"},`, 1)
	_, err = ParseMeasurements(strings.NewReader(twice), "pinned.results.json")
	var ie *inputerr.Error
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "pinned.results.json: gates[1]") || !strings.Contains(err.Error(), "repeats gates[0] (h2d-pageable copy-back)") {
		t.Errorf("a gate twice in the results file: %v", err)
	}
}

// A transcript or results file of the shipped capture that reports the
// program's gates but not one that checks rows it holds is refused,
// naming the gate and the rows: the program checks each before it prints
// their timings. A file without gates (written by hand) and one whose gate
// failed (untrusted whole) read.
func TestGateMissingRefused(t *testing.T) {
	const dir = "../testdata/captures/h200-pinned/"
	tr, err := os.ReadFile(dir + "pinned.transcript.txt")
	if err != nil {
		t.Fatal(err)
	}
	without := func(s, prefix string) string {
		var out []string
		for _, l := range strings.SplitAfter(s, "\n") {
			if !strings.HasPrefix(l, prefix) {
				out = append(out, l)
			}
		}
		return strings.Join(out, "")
	}
	_, err = ParseTranscript(strings.NewReader(without(string(tr), "gate h2d-pageable")), "pinned.transcript.txt")
	var ie *inputerr.Error
	if !errors.As(err, &ie) || !strings.Contains(ie.Problem, `the timings of h2d pageable copies without the correctness gate "h2d-pageable copy-back"`) {
		t.Errorf("the h2d-pageable gate gone: %v", err)
	}
	if _, err := ParseTranscript(strings.NewReader(without(string(tr), "gate ")), "pinned.transcript.txt"); err != nil {
		t.Errorf("every gate gone: %v", err)
	}
	failed := strings.Replace(without(string(tr), "gate kernel-zero-copy"), "gate kernel-device-resident       ok", "gate kernel-device-resident       FAILED: sum mismatch", 1)
	if m, err := ParseTranscript(strings.NewReader(failed), "pinned.transcript.txt"); err != nil || len(m.Gates) != 5 {
		t.Errorf("a failed gate, the next gone: %v", err)
	}

	js, err := os.ReadFile(dir + "pinned.results.json")
	if err != nil {
		t.Fatal(err)
	}
	gate := `    {"name": "kernel-zero-copy", "passed": true, "detail": ""}`
	if !strings.Contains(string(js), gate) {
		t.Fatalf("the shipped results file holds no %s", gate)
	}
	edited := strings.Replace(strings.Replace(string(js), ",\n"+gate, "", 1), gate, "", 1)
	_, err = ParseMeasurements(strings.NewReader(edited), "pinned.results.json")
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), `gates lack "kernel-zero-copy", the correctness gate that checks the timings of the zero-copy kernel's launches`) {
		t.Errorf("the kernel-zero-copy gate gone from the results file: %v", err)
	}
}
