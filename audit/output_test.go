package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	out, ok, err = ReadOutput(write("two.json", `{`+head+`"inputs": ["a", "b"], "results": [{"copies": 7}, {"copies": 8}], "check": {"verdict": "held"}}`))
	if !ok || err != nil || out.Before.Copies != 7 || out.After.Copies != 8 || out.Check == nil || out.Check.Verdict != Held {
		t.Errorf("envelope of two audits: %+v %v %v", out, ok, err)
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
		"null result":           {`{` + head + `"inputs": ["a"], "results": [null]}`, "a null result"},
		"bad field":             {`{` + head + `"inputs": ["a"], "results": [{"copies": "many"}]}`, "cannot be read"},
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
