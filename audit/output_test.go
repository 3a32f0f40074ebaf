package audit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/replay"
	"github.com/nsyscheck/nsyscheck/vocab"
)

func TestReadOutput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	head := `"schemaVersion": 1, "kind": "audit", "tool": {"name": "nsyscheck", "version": "x"}, `
	// The envelope: one capture, and two with the check.
	out, ok, err := ReadOutput(write("one.json", `{`+head+`"inputs": ["a"], "results": [{"capture": "a", "copies": 7}]}`))
	if !ok || err != nil || out.Before.Copies != 7 || out.After != nil || out.Check != nil {
		t.Errorf("envelope of one audit: %+v %v %v", out, ok, err)
	}
	// Two audits and their check, as audit BEFORE AFTER writes them.
	step := predicted(region("step", 10, 5, 50), 1, 0.9, 1.2)
	before := withRegions(auditOf(10, pg, mb4, 700_000), region(replay.CaptureRegion, 1, 100, 100), step)
	after := withRegions(auditOf(10, pin, mb4, 20_000), region(replay.CaptureRegion, 1, 30, 30), region("step", 10, 1.25, 12.5))
	// The captures' spans hold their regions, as an audit's always do.
	before.SpanNs, after.SpanNs = 100_000_000, 30_000_000
	two := func(after *Audit, check *Check) string {
		b, _ := json.Marshal(before)
		a, _ := json.Marshal(after)
		c, _ := json.Marshal(check)
		return `{` + head + `"inputs": ["a", "b"], "results": [` + string(b) + `, ` + string(a) + `], "check": ` + string(c) + `}`
	}
	check := Compare(before, after, nil)
	out, ok, err = ReadOutput(write("two.json", two(after, check)))
	if !ok || err != nil || out.Before.Copies != before.Copies || out.After.Copies != after.Copies || out.Check == nil || out.Check.Verdict != Held {
		t.Errorf("envelope of two audits: %+v %v %v", out, ok, err)
	}
	// A check its audits do not give is refused: an edited verdict, an
	// edited number, a held check beside numbers that say died.
	edited := *check
	edited.Verdict = Died
	if _, ok, err := ReadOutput(write("died.json", two(after, &edited))); !ok || err == nil ||
		!strings.Contains(err.Error(), "the check's verdict is died, but the numbers of its two audits give held") {
		t.Errorf("an edited verdict: %v %v", ok, err)
	}
	edited = *check
	edited.HtoDAfterNs /= 10
	if _, ok, err := ReadOutput(write("faster.json", two(after, &edited))); !ok || err == nil || !strings.Contains(err.Error(), "the check's htodAfterNs is not what its two audits give") {
		t.Errorf("an edited number: %v %v", ok, err)
	}
	slower := withRegions(auditOf(10, pin, mb4, 20_000), region(replay.CaptureRegion, 1, 30, 30), region("step", 10, 3, 30))
	slower.SpanNs = 30_000_000
	if _, ok, err := ReadOutput(write("numbers-died.json", two(slower, check))); !ok || err == nil ||
		!strings.Contains(err.Error(), "the check's verdict is held, but the numbers of its two audits give died") {
		t.Errorf("a held check beside numbers that say died: %v %v", ok, err)
	}
	// The earlier form is still read.
	out, ok, err = ReadOutput(write("legacy.json", `{"schemaVersion":"`+LegacySchemaVersion+`","before":{"schemaVersion":"`+LegacySchemaVersion+`","copies":7}}`))
	if !ok || err != nil || out.Before.Copies != 7 || out.Check != nil {
		t.Errorf("legacy audit JSON: %+v %v %v", out, ok, err)
	}
	// Not audits: verify's envelope, another file, none.
	for _, p := range []string{write("r.json", `{"schemaVersion": 1, "kind": "verify", "results": []}`), write("a.txt", `{}`),
		write("arr.json", `[1]`), filepath.Join(dir, "none.json")} {
		if _, ok, err := ReadOutput(p); ok || err != nil {
			t.Errorf("%s read as an audit: %v %v", p, ok, err)
		}
	}
	// Audits that cannot be read say why.
	for name, c := range map[string]struct{ body, want string }{
		"legacy without before": {`{"schemaVersion":"` + LegacySchemaVersion + `"}`, `no "before"`},
		"newer version":         {`{"schemaVersion": 2, "kind": "audit", "results": [{}]}`, "schemaVersion 2; this nsyscheck reads version 1"},
		"no results":            {`{` + head + `"inputs": [], "results": []}`, "0 results"},
		"check of one":          {`{` + head + `"inputs": ["a"], "results": [{}], "check": {}}`, "a check needs the capture before and after"},
		"check without a prediction": {`{` + head + `"inputs": ["a", "b"], "results": [{"copies": 7}, {"copies": 8}], "check": {"verdict": "held"}}`,
			"the audit before the fix has no prediction"},
		"null result": {`{` + head + `"inputs": ["a"], "results": [null]}`, "a null result"},
		"bad field":   {`{` + head + `"inputs": ["a"], "results": [{"copies": "many"}]}`, "cannot be read"},
		"nested too deep": {`{` + head + `"inputs": ["a"], "results": [{"x": ` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `}]}`,
			"nested deeper than"},
	} {
		_, ok, err := ReadOutput(write(strings.ReplaceAll(name, " ", "-")+".json", c.body))
		if !ok || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: ok %v, err %v; want %q", name, ok, err, c.want)
		}
	}
}

// TestReadLegacyOutput reads the training captures' audit as the release
// before the envelope wrote it (testdata/train-audit.v1.json) and finds the
// numbers a fresh audit of the same captures gives: its copies, classes and
// the host time of their host-to-device copy calls (its check, of copy call
// time alone, held; the region check a fresh audit makes is another).
func TestReadLegacyOutput(t *testing.T) {
	out, ok, err := ReadOutput(filepath.Join("testdata", "train-audit.v1.json"))
	if !ok || err != nil {
		t.Fatalf("legacy audit: %v %v", ok, err)
	}
	before, after := auditPath(t, trainPageable), auditPath(t, trainPinned)
	if out.After == nil || out.Check == nil || out.Before.Copies != before.Copies || out.After.Copies != after.Copies ||
		len(out.Before.Classes) != len(before.Classes) || out.Check.HtoDBeforeNs != before.Sum(vocab.CopyHtoD, "", "").HostNs ||
		out.Check.HtoDAfterNs != after.Sum(vocab.CopyHtoD, "", "").HostNs || out.Check.Verdict != Held {
		t.Errorf("legacy audit read as %+v, check %+v", out.Before, out.Check)
	}
}

// TestReadRefusesImpossible: an audit read back whose numbers no audit
// makes (a prediction outside its bound, a negative bound, a region
// longer than the whole capture) is refused, naming the field, from the
// JSON of one audit and from the ranks' JSON alike; the audit as written
// is read.
func TestReadRefusesImpossible(t *testing.T) {
	au := withRegions(auditOf(10, pg, mb4, 700_000), region(replay.CaptureRegion, 1, 100, 100), predicted(region("step", 10, 5, 50), 1, 0.9, 1.2))
	au.SpanNs, au.SpanFrom = 100_000_000, capture.SpanTrace
	step := 1
	dir := t.TempDir()
	write := func(name, kind string, a *Audit) string {
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		body := `{"schemaVersion": 1, "kind": "` + kind + `", "tool": {"name": "nsyscheck", "version": "x"}, "inputs": ["a"], "results": [` + string(b) + `]}`
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if _, ok, err := ReadOutput(write("as-written.json", EnvelopeKind, au)); !ok || err != nil {
		t.Fatalf("the audit as written: %v %v", ok, err)
	}
	cases := []struct {
		name  string
		edit  func(a *Audit)
		field string
	}{
		{"predicted x10", func(a *Audit) { a.Regions[step].PredictedMedianMs *= 10 }, `regions[` + strconv.Itoa(step) + `] ("step").predictedMedian is`},
		{"negative low", func(a *Audit) { a.Regions[step].PredictedMedianLowMs = -5 }, `("step").predictedMedianLowMs is -5, not a time`},
		{"longer than the capture", func(a *Audit) { a.Regions[step].MedianMs, a.Regions[step].SpanMs = 99999, 99999 }, `("step").medianMs is 99999 ms, longer than the whole capture`},
		{"negative prediction", func(a *Audit) { a.Prediction.AfterLowNs = -1 }, "prediction.afterLowNs is -1, below zero"},
		{"prediction outside its bound", func(a *Audit) { a.Prediction.AfterNs, a.Prediction.AfterHighNs = 9, 8 }, "prediction.after is 9, outside its own bound 0-8"},
	}
	for _, c := range cases {
		b, _ := json.Marshal(au)
		var edited Audit
		if err := json.Unmarshal(b, &edited); err != nil {
			t.Fatal(err)
		}
		c.edit(&edited)
		for _, kind := range []string{EnvelopeKind, EnvelopeKindRanks} {
			p := write(strings.ReplaceAll(c.name, " ", "-")+"-"+kind+".json", kind, &edited)
			var err error
			if kind == EnvelopeKind {
				_, _, err = ReadOutput(p)
			} else {
				_, _, _, err = ReadRanks(p)
			}
			if err == nil || !strings.Contains(err.Error(), c.field) || !strings.Contains(err.Error(), "was edited") {
				t.Errorf("%s (%s): err %v, want one naming %q", c.name, kind, err, c.field)
			}
		}
	}
}
