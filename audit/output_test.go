package audit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	before, after := auditPath(t, trainPageable), auditPath(t, trainPinned)
	two := func(check *Check) string {
		b, _ := json.Marshal(before)
		a, _ := json.Marshal(after)
		c, _ := json.Marshal(check)
		return `{` + head + `"inputs": ["a", "b"], "results": [` + string(b) + `, ` + string(a) + `], "check": ` + string(c) + `}`
	}
	check := Compare(before, after)
	out, ok, err = ReadOutput(write("two.json", two(check)))
	if !ok || err != nil || out.Before.Copies != before.Copies || out.After.Copies != after.Copies || out.Check == nil || out.Check.Verdict != Held {
		t.Errorf("envelope of two audits: %+v %v %v", out, ok, err)
	}
	// A check its audits do not give is refused: an edited verdict, or an
	// edited number.
	edited := *check
	edited.Verdict = Died
	if _, ok, err := ReadOutput(write("died.json", two(&edited))); !ok || err == nil ||
		!strings.Contains(err.Error(), "the check's verdict is died, but the numbers of its two audits give held") {
		t.Errorf("an edited verdict: %v %v", ok, err)
	}
	edited = *check
	edited.HtoDAfterNs /= 10
	if _, ok, err := ReadOutput(write("faster.json", two(&edited))); !ok || err == nil || !strings.Contains(err.Error(), "the check's htodAfterNs is not what its two audits give") {
		t.Errorf("an edited number: %v %v", ok, err)
	}
	slower := *after
	slower.Totals = append([]Total(nil), after.Totals...)
	for i := range slower.Totals {
		slower.Totals[i].HostNs *= 100
	}
	b, _ := json.Marshal(before)
	a, _ := json.Marshal(&slower)
	c, _ := json.Marshal(check)
	if _, ok, err := ReadOutput(write("numbers-died.json", `{`+head+`"inputs": ["a", "b"], "results": [`+string(b)+`, `+string(a)+`], "check": `+string(c)+`}`)); !ok || err == nil ||
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
	} {
		_, ok, err := ReadOutput(write(strings.ReplaceAll(name, " ", "-")+".json", c.body))
		if !ok || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: ok %v, err %v; want %q", name, ok, err, c.want)
		}
	}
}

// TestReadLegacyOutput reads the training captures' audit as the release
// before the envelope wrote it (testdata/train-audit.v1.json) and finds the
// numbers a fresh audit of the same captures gives.
func TestReadLegacyOutput(t *testing.T) {
	out, ok, err := ReadOutput(filepath.Join("testdata", "train-audit.v1.json"))
	if !ok || err != nil {
		t.Fatalf("legacy audit: %v %v", ok, err)
	}
	before, after := auditPath(t, trainPageable), auditPath(t, trainPinned)
	c := Compare(before, after)
	if out.After == nil || out.Check == nil || out.Before.Copies != before.Copies || out.After.Copies != after.Copies ||
		len(out.Before.Classes) != len(before.Classes) || out.Check.HtoDBeforeNs != c.HtoDBeforeNs ||
		out.Check.HtoDAfterNs != c.HtoDAfterNs || out.Check.Verdict != c.Verdict {
		t.Errorf("legacy audit read as %+v, check %+v", out.Before, out.Check)
	}
}
