package report

import (
	"errors"
	"testing"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/coverage"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
)

// Every kind of difference from an expected audit in words: the value and
// its region, what was expected, what the audit gives or lacks.
func TestExpectDifferenceWords(t *testing.T) {
	reader := &inputerr.Error{Path: "x.sqlite", Problem: "the audit is unavailable: the capture holds no memory copy records"}
	refused := &audit.Refusal{Err: reader, Limits: []diag.Diagnostic{{Level: diag.Warning, Detail: coverage.Incomplete{}}}}
	for _, c := range []struct {
		d    audit.ExpectDifference
		want string
	}{
		{audit.ExpectDifference{Key: "pageableHtod", Want: int64(0), Got: int64(6)}, "pageableHtod: expected 0, got 6"},
		{audit.ExpectDifference{Key: "finding", ID: "cannot-overlap", Want: int64(3), Got: int64(2)}, "finding cannot-overlap: expected 3, got 2"},
		{audit.ExpectDifference{Key: "finding", ID: "x", Want: int64(3), Lacks: true}, "finding x: expected 3 copies, the audit has no such finding"},
		{audit.ExpectDifference{Key: "verdict", Want: "held", Got: "died"}, "verdict: expected held, got died"},
		{audit.ExpectDifference{Key: "verdict", Want: "held", Lacks: true}, "verdict: expected held, got (no check)"},
		{audit.ExpectDifference{Key: "predictionSources", Want: []string{"run"}, Got: []string{"capture", "link"}}, "predictionSources: expected run, got capture,link"},
		{audit.ExpectDifference{Key: "apiKinds", ID: "graph", Want: int64(60), Got: int64(0)}, "apiKinds graph: expected 60 copies, got 0"},
		{audit.ExpectDifference{Key: "coverage", Want: []string{}, Got: []string{"unified-memory"}}, "coverage: expected [], got [unified-memory]"},
		{audit.ExpectDifference{Region: "loop", Key: "region", Lacks: true}, "region loop: expected, the capture has no such region"},
		{audit.ExpectDifference{Region: "step", Key: "instances", Want: 3, Got: 67}, "region step: instances: expected 3, got 67"},
		{audit.ExpectDifference{Region: "step", Key: "fitWithin", Want: 0.05, Got: -0.071}, "region step: the replay is -7.1% off the capture, expected within 5.0%"},
		{audit.ExpectDifference{Region: "step", Key: "check", Lacks: true}, "region step: expected a check of it, there is none"},
		{audit.ExpectDifference{Region: "step", Key: "predictedWithin", Want: 0.15, Got: [2]float64{1.5, 2}}, "region step: predicted 1.500 ms, 2.000 ms after: expected within 15.0%"},
		{audit.ExpectDifference{Region: "step", Key: "verdict", Want: "held", Got: ""}, `region step: verdict: expected "held", got ""`},
		{audit.ExpectDifference{Region: "step", Key: "faster", Want: true, Got: false}, "region step: faster: expected true, got false"},
		{audit.ExpectDifference{Key: "refused", Want: []string{"capture-incomplete"}, Lacks: true}, "refused: expected a refusal naming [capture-incomplete], got an audit"},
		{audit.ExpectDifference{Key: "unavailable", Got: errors.New("x.sqlite: not an export")}, "refused: expected the audit unavailable, got: x.sqlite: not an export"},
	} {
		if got := ExpectDifference(c.d); got != c.want {
			t.Errorf("ExpectDifference(%+v) = %q, want %q", c.d, got, c.want)
		}
	}
	// A refusal is worded with its limits.
	got := ExpectDifference(audit.ExpectDifference{Key: "refused", ID: "cuda-graphs-whole", Got: refused})
	if want := "refused: expected the reason to name cuda-graphs-whole, got: " + Refused(refused).Error(); got != want || want == reader.Error() {
		t.Errorf("refusal worded %q, want %q", got, want)
	}
}
