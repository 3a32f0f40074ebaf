package auditjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/ranks"
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
	// Two audits and their check, as audit BEFORE AFTER writes them (the
	// training pair).
	train, ok, err := ReadOutput(filepath.Join("..", "report", "testdata", "audits", "train.json"))
	if !ok || err != nil || train.Check == nil {
		t.Fatalf("the training pair: %v %v", ok, err)
	}
	two := func(check *audit.Check) string {
		b, _ := json.Marshal(FromAudit(train.Before))
		a, _ := json.Marshal(FromAudit(train.After))
		c, _ := json.Marshal(FromCheck(check))
		return `{` + head + `"inputs": ["a", "b"], "results": [` + string(b) + `, ` + string(a) + `], "check": ` + string(c) + `}`
	}
	out, ok, err = ReadOutput(write("two.json", two(train.Check)))
	if !ok || err != nil || out.Before.Copies != train.Before.Copies || out.After.Copies != train.After.Copies || out.Check == nil ||
		!reflect.DeepEqual(out.Check, train.Check) {
		t.Errorf("envelope of two audits: %+v %v %v", out, ok, err)
	}
	// A check its audits do not give is refused: a verdict its numbers do
	// not give, an edited number.
	edited := *train.Check
	edited.Verdict = audit.Held
	if train.Check.Verdict == audit.Held {
		edited.Verdict = audit.Died
	}
	if _, ok, err := ReadOutput(write("edited.json", two(&edited))); !ok || err == nil ||
		!strings.Contains(err.Error(), "the check's verdict is "+string(edited.Verdict)+", but the numbers of its two audits give "+string(train.Check.Verdict)) {
		t.Errorf("an edited verdict: %v %v", ok, err)
	}
	edited = *train.Check
	edited.HtoDAfterNs /= 10
	if _, ok, err := ReadOutput(write("faster.json", two(&edited))); !ok || err == nil || !strings.Contains(err.Error(), "the check's htodAfterNs is not what its two audits give") {
		t.Errorf("an edited number: %v %v", ok, err)
	}
	// The earlier form is still read.
	out, ok, err = ReadOutput(write("legacy.json", `{"schemaVersion":"`+audit.LegacySchemaVersion+`","before":{"schemaVersion":"`+audit.LegacySchemaVersion+`","copies":7}}`))
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
		"legacy without before": {`{"schemaVersion":"` + audit.LegacySchemaVersion + `"}`, `no "before"`},
		"newer version":         {`{"schemaVersion": 2, "kind": "audit", "results": [{}]}`, "schemaVersion 2; this nsyscheck reads version 1"},
		"no results":            {`{` + head + `"inputs": [], "results": []}`, "0 results"},
		"check of one":          {`{` + head + `"inputs": ["a"], "results": [{}], "check": {}}`, "a check needs the capture before and after"},
		"check without a prediction": {`{` + head + `"inputs": ["a", "b"], "results": [{"copies": 7}, {"copies": 8}], "check": {"verdict": "held"}}`,
			"the audit before the fix has no prediction"},
		"null result": {`{` + head + `"inputs": ["a"], "results": [null]}`, "a null result"},
		"bad field":   {`{` + head + `"inputs": ["a"], "results": [{"copies": "many"}]}`, "cannot be read"},
		// encoding/json reads a key in any case into its field.
		"a key in another case": {`{` + head + `"inputs": ["a"], "results": [{"copies": 7, "nvidiaRule": {"sourceKind": "csv", "SourceKind": "scan"}}]}`,
			`results[0].nvidiaRule.SourceKind: keys are matched in their case, and no audit writes this one (it would be read as "sourceKind")`},
		"a check key in another case": {`{` + head + `"inputs": ["a", "b"], "results": [{"copies": 7}, {"copies": 8}], "Check": {"verdict": "held"}}`,
			`Check: keys are matched in their case`},
	} {
		_, ok, err := ReadOutput(write(strings.ReplaceAll(name, " ", "-")+".json", c.body))
		if !ok || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: ok %v, err %v; want %q", name, ok, err, c.want)
		}
	}
}

// TestReadLegacyOutput reads the training captures' audit as the release
// before the envelope wrote it (testdata/train-audit.v1.json) and finds the
// numbers a fresh audit of the same captures gives (report's fixture,
// which check's TestAuditFixtures keeps): its copies, classes and the host
// time of their host-to-device copy calls (its check, of copy call time
// alone, held; the region check a fresh audit makes is another).
func TestReadLegacyOutput(t *testing.T) {
	out, ok, err := ReadOutput(filepath.Join("testdata", "train-audit.v1.json"))
	if !ok || err != nil {
		t.Fatalf("legacy audit: %v %v", ok, err)
	}
	fresh, ok, err := ReadOutput(filepath.Join("..", "report", "testdata", "audits", "train.json"))
	if !ok || err != nil {
		t.Fatalf("the training pair: %v %v", ok, err)
	}
	before, after := fresh.Before, fresh.After
	if out.After == nil || out.Check == nil || out.Before.Copies != before.Copies || out.After.Copies != after.Copies ||
		len(out.Before.Classes) != len(before.Classes) || out.Check.HtoDBeforeNs != before.Sum(vocab.CopyHtoD, "", "").HostNs ||
		out.Check.HtoDAfterNs != after.Sum(vocab.CopyHtoD, "", "").HostNs || out.Check.Verdict != audit.Held {
		t.Errorf("legacy audit read as %+v, check %+v", out.Before, out.Check)
	}
}

// The JSON names tools read are fixed: the regions' and the check's among
// them, and a value that does not exist left out.
func TestJSONFieldNames(t *testing.T) {
	train, ok, err := ReadOutput(filepath.Join("..", "report", "testdata", "audits", "train.json"))
	if !ok || err != nil {
		t.Fatalf("the training pair: %v %v", ok, err)
	}
	for what, v := range map[string]any{"audit": FromAudit(train.Before), "check": FromCheck(train.Check)} {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{`"regions":[{"name":"(capture)","instances":1,"medianMs":`, `"replayMedianMs":`, `"predictedMedianMs":`,
			`"predictedSpanHighMs":`, `"overlap":{"measured":`, `"fit":{"median":`, `"medianCI":{"lowMs":`}
		if what == "audit" {
			want = append(want, `"classes":`, `"topOffenders":`, `"findings":`, `"prediction":`, `"hostNs":`, `"gpuGBps":`,
				`"nvtxRange":"step"`, `"savedLowNs":`, `"htod":`, `"pageableShare":`, `"measure":"median"`, `"exposures":[]`)
		} else {
			want = append(want, `"afterMedianMs":`, `"afterSpanMs":`, `"verdict":"`+string(train.Check.Verdict)+`"`, `"boundLowMs":`, `"tolerance":{"model":0.05,`)
		}
		for _, f := range want {
			if !bytes.Contains(data, []byte(f)) {
				t.Errorf("%s JSON lacks %s:\n%.2000s", what, f, data)
			}
		}
		// The whole capture has one instance: no period.
		if bytes.Contains(data, []byte(`"name":"(capture)","instances":1,`)) && bytes.Contains(data[:bytes.Index(data, []byte(`"name":"(capture)"`))+400], []byte(`"period":`)) {
			t.Errorf("%s JSON gives the whole capture a period", what)
		}
	}
}

// Who chose the way to pin is spelt as the schema has it, and a spelling
// it does not have is refused.
func TestPinChooser(t *testing.T) {
	for c, want := range map[audit.PinChooser]string{audit.PinByFramework: `"framework"`, audit.PinByFlag: `"--pin-by"`} {
		b, err := json.Marshal(PinChooser(c))
		var back PinChooser
		if err != nil || string(b) != want || json.Unmarshal(b, &back) != nil || audit.PinChooser(back) != c {
			t.Errorf("%d: %s %v, back %d", c, b, err, back)
		}
	}
	var c PinChooser
	if err := json.Unmarshal([]byte(`"the user"`), &c); err == nil || !strings.Contains(err.Error(), `pinByFrom "the user"`) {
		t.Errorf("an unknown chooser: %v", err)
	}
}

// How NVIDIA's rule was had is spelt as the schema has it and read back
// as its kind, with its words; a spelling the schema does not have is
// refused, and a JSON of an earlier version, which names no kind, is read
// as its words alone.
func TestRuleSourceKind(t *testing.T) {
	for k, want := range map[audit.RuleSourceKind]string{audit.RuleSourceAnalyze: `"nsys-analyze"`, audit.RuleSourceCSV: `"csv"`, audit.RuleSourceScan: `"scan"`} {
		j := fromRuleComparison(audit.RuleComparison{Rule: "r", Available: true, Source: audit.RuleSource{Kind: k, Path: "p"}})
		j.Source = "words"
		b, err := json.Marshal(j)
		var back RuleComparison
		if err != nil || !bytes.Contains(b, []byte(`"sourceKind":`+want)) || json.Unmarshal(b, &back) != nil {
			t.Fatalf("%d: %s %v", k, b, err)
		}
		if got := toRuleComparison(back).Source; got.Kind != k || got.Text != "words" {
			t.Errorf("%d read back as %+v", k, got)
		}
	}
	if got := toRuleComparison(RuleComparison{Source: "words"}).Source; got.Kind != audit.RuleSourceRead || got.Text != "words" {
		t.Errorf("an earlier JSON's source read back as %+v", got)
	}
	b, _ := json.Marshal(fromRuleComparison(audit.RuleComparison{Rule: "r", Note: "not asked for"}))
	if bytes.Contains(b, []byte("sourceKind")) {
		t.Errorf("a rule not compared names a source kind: %s", b)
	}
	var k RuleSourceKind
	if err := json.Unmarshal([]byte(`"guess"`), &k); err == nil || !strings.Contains(err.Error(), `sourceKind "guess"`) {
		t.Errorf("an unknown kind: %v", err)
	}
}

func TestReadRefusesImpossible(t *testing.T) {
	train, ok, err := ReadOutput(filepath.Join("..", "report", "testdata", "audits", "train.json"))
	if !ok || err != nil {
		t.Fatalf("the training pair: %v %v", ok, err)
	}
	au := train.Before
	step := -1
	for i, r := range au.Regions {
		if r.Name == "step" {
			step = i
		}
	}
	if step < 0 || au.SpanNs <= 0 || au.Prediction == nil {
		t.Fatalf("the training audit has no step region, span or prediction: %+v", au.Regions)
	}
	dir := t.TempDir()
	write := func(name, kind string, a *audit.Audit) string {
		b, err := json.Marshal(FromAudit(a))
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
	if _, ok, err := ReadOutput(write("as-written.json", audit.EnvelopeKind, au)); !ok || err != nil {
		t.Fatalf("the audit as written: %v %v", ok, err)
	}
	cases := []struct {
		name  string
		edit  func(a *audit.Audit)
		field string
	}{
		{"predicted x10", func(a *audit.Audit) { a.Regions[step].PredictedMedianMs *= 10 }, `regions[` + strconv.Itoa(step) + `] ("step").predictedMedian is`},
		{"negative low", func(a *audit.Audit) { a.Regions[step].PredictedMedianLowMs = -5 }, `("step").predictedMedianLowMs is -5, not a time`},
		{"longer than the capture", func(a *audit.Audit) { a.Regions[step].MedianMs, a.Regions[step].SpanMs = 99999, 99999 }, `("step").medianMs is 99999 ms, longer than the whole capture`},
		{"negative prediction", func(a *audit.Audit) { a.Prediction.AfterLowNs = -1 }, "prediction.afterLowNs is -1, below zero"},
		{"copies against classes", func(a *audit.Audit) { a.Copies = 7 }, "copies is 7, but its classes hold 207 copies"},
		{"a total past its classes", func(a *audit.Audit) { a.Totals[0].Bytes++ }, "totals[0] ("},
		{"a total left out", func(a *audit.Audit) { a.Totals = a.Totals[1:] }, "that no total sums"},
		{"a total's host memory renamed", func(a *audit.Audit) {
			for i := range a.Totals {
				if a.Totals[i].HostMemory == audit.Pinned {
					a.Totals[i].HostMemory = audit.Pageable
				}
			}
		}, "totals["},
		{"finding past the copies", func(a *audit.Audit) { a.Findings[0].Count = a.Copies + 1 }, "counts 208 copies of the audit's 207"},
		{"prediction outside its bound", func(a *audit.Audit) {
			a.Prediction.AfterLowNs, a.Prediction.AfterNs, a.Prediction.AfterHighNs = 0, 9, 8
		}, "prediction.after is 9, outside its own bound 0-8"},
		// NVIDIA's rule's comparison (140 copies each side, agreeing).
		{"rule agrees on 5 of 140", func(a *audit.Audit) { a.NVIDIA.RuleCount, a.NVIDIA.Both = 5, 5 },
			"nvidiaRule: agree is true, but the rule lists 5 copies, the audit 140, 5 in both"},
		{"rule count below zero", func(a *audit.Audit) { a.NVIDIA.RuleCount, a.NVIDIA.Agree = -3, false }, "ruleCount -3, auditCount 140, both 140: a count below zero"},
		{"both past the counts", func(a *audit.Audit) { a.NVIDIA.Both, a.NVIDIA.Agree = 500, false }, "both is 500, more than the rule's 140 copies"},
		{"only the rule's past its count", func(a *audit.Audit) {
			a.NVIDIA.Agree, a.NVIDIA.RuleCount, a.NVIDIA.OnlyRule = false, 141, []audit.Flagged{{PID: 1, Start: 1}, {PID: 1, Start: 2}}
		}, "onlyRule names 2 copies and onlyAudit 0, more than the 1 and 0"},
		{"a rule copy of negative time", func(a *audit.Audit) {
			a.NVIDIA.Agree, a.NVIDIA.RuleCount, a.NVIDIA.OnlyRule = false, 141, []audit.Flagged{{PID: 1, Start: 1, Duration: -5}}
		}, "nvidiaRule.onlyRule[0]: start 1 ns, duration -5 ns"},
		{"rule's audit count against the classes", func(a *audit.Audit) { a.NVIDIA.AuditCount, a.NVIDIA.RuleCount, a.NVIDIA.Both = 7, 7, 7 },
			"nvidiaRule.auditCount is 7, but the audit's classes hold 140 pageable async copies"},
		{"rule not compared for no reason", func(a *audit.Audit) { a.NVIDIA.Available, a.NVIDIA.Note = false, "" }, "nvidiaRule is not compared, and its note does not say why"},
		// Numbers that contradict one another, each rendered once as it was.
		{"pinning more copies than the groups", func(a *audit.Audit) { a.Prediction.Count = 99999 }, "prediction.count is 99999, but its groups sum 140"},
		{"a saving that is not before less after", func(a *audit.Audit) { a.Prediction.SavedNs = -5 }, "prediction.savedNs is -5 ns, but the host time before (49989140 ns) less that after"},
		{"host time before against the groups", func(a *audit.Audit) { a.Prediction.BeforeNs = 1 }, "prediction.beforeNs is 1, but its groups sum 49989140"},
		{"negative instances", func(a *audit.Audit) { a.Regions[step].Instances = -3 }, `("step").instances is -3, below zero`},
		{"pageable calls past all copy calls", func(a *audit.Audit) { a.Regions[step].PageableCallMs = a.Regions[step].CopyCallMs * 5 }, `("step").pageableCallMs is`},
		{"pageable share past the copy calls'", func(a *audit.Audit) { a.Regions[step].PageableShare = 3 }, `("step").pageableShare is 3, above hostShare.measured`},
		{"negative API calls", func(a *audit.Audit) { a.APICalls = -4 }, "apiCalls -4: a count below zero"},
		{"a class of negative bytes", func(a *audit.Audit) { a.Classes[0].Bytes = -1 }, "classes[0] holds"},
		{"more secretly synchronous copies than a class holds", func(a *audit.Audit) { a.Classes[0].SecretlySync = a.Classes[0].Count + 1 }, "classes[0] counts"},
		{"a finding of negative bytes", func(a *audit.Audit) { a.Findings[0].Bytes = -5 }, "holds -5 bytes"},
		{"an evidence copy's call of negative time", func(a *audit.Audit) { a.Findings[0].Evidence[0].CallNs = -100 }, "evidence[0] (correlation id"},
		{"more pageable call sites than copies", func(a *audit.Audit) { a.CallSites.Pageable.Copies = 100000 }, "callSites.pageable holds 100000 copies"},
		{"more copies re-costed than the audit holds", func(a *audit.Audit) { a.Replay.Recosted = 99999 }, "replay: recosted 99999"},
		{"negative pinned allocations", func(a *audit.Audit) { a.PinAllocs.Calls = -1 }, "pinAllocs: -1 calls"},
		{"a top offender none of the classes", func(a *audit.Audit) {
			top := *a.TopOffenders[0]
			top.Count = 99999
			a.TopOffenders[0] = &top
		}, "topOffenders[0] (cudaMemcpyAsync HtoD pageable"},
		{"a pinned class as a top offender", func(a *audit.Audit) {
			for _, c := range a.Classes {
				if c.HostMemory == audit.Pinned {
					a.TopOffenders[0] = c
					break
				}
			}
		}, "is of pinned host memory, which no offender is"},
	}
	for _, c := range cases {
		// A copy of the audit, edited: read back from its JSON.
		b, _ := json.Marshal(FromAudit(au))
		var j Audit
		if err := json.Unmarshal(b, &j); err != nil {
			t.Fatal(err)
		}
		edited := toAudit(j)
		c.edit(&edited)
		for _, kind := range []string{audit.EnvelopeKind, audit.EnvelopeKindRanks} {
			p := write(strings.ReplaceAll(c.name, " ", "-")+"-"+kind+".json", kind, &edited)
			var err error
			if kind == audit.EnvelopeKind {
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

// TestReadMasksCredentials: an audit's JSON edited to hold credentials in
// the GPU's name, a region's name and a framework clue (the audit masks
// them when it writes one) is read back with every one masked, so that no
// renderer, the HTML report's among them, shows them; in a check and in
// the audits of ranks alike.
func TestReadMasksCredentials(t *testing.T) {
	train, ok, err := ReadOutput(filepath.Join("..", "report", "testdata", "audits", "train.json"))
	if !ok || err != nil {
		t.Fatalf("the training pair: %v %v", ok, err)
	}
	const token = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
	const aws = "AKIA" + "Z7QRSTUVWXYZ2345"
	plant := func(a *audit.Audit) *audit.Audit {
		b, _ := json.Marshal(FromAudit(a))
		var j Audit
		if err := json.Unmarshal(b, &j); err != nil {
			t.Fatal(err)
		}
		au := toAudit(j)
		au.GPU = "NVIDIA H200 " + aws
		for i := range au.Regions {
			au.Regions[i].Name += " " + token
		}
		if len(au.Framework.Clues) > 0 {
			au.Framework.Clues[0].Name = "pt_" + token
		}
		return &au
	}
	before, after := plant(train.Before), plant(train.After)
	check := audit.Compare(before, after, train.Check.Match)
	b, _ := json.Marshal(FromAudit(before))
	a, _ := json.Marshal(FromAudit(after))
	c, _ := json.Marshal(FromCheck(check))
	capture, _ := json.Marshal(before.Capture)
	head := `"schemaVersion": 1, "tool": {"name": "nsyscheck", "version": "x"}, "inputs": ["a", "b"], `
	dir := t.TempDir()
	pair := filepath.Join(dir, "pair.json")
	ranks := filepath.Join(dir, "ranks.json")
	for p, body := range map[string]string{
		pair:  `{"kind": "audit", ` + head + `"results": [` + string(b) + `, ` + string(a) + `], "check": ` + string(c) + `}`,
		ranks: `{"kind": "audit-ranks", ` + head + `"results": [` + string(b) + `], "ranks": {"rows": [{"capture": ` + string(capture) + `}]}}`,
	} {
		if !strings.Contains(body, token) || !strings.Contains(body, aws) {
			t.Fatalf("%s: the credentials were not planted", p)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, ok, err := ReadOutput(pair)
	if !ok || err != nil || out.After == nil || out.Check == nil {
		t.Fatalf("the pair with credentials: %v %v", ok, err)
	}
	audits, _, ok, err := ReadRanks(ranks)
	if !ok || err != nil || len(audits) != 1 {
		t.Fatalf("the ranks with credentials: %v %v", ok, err)
	}
	for name, v := range map[string]any{"before": out.Before, "after": out.After, "check": out.Check, "rank": audits[0]} {
		got, _ := json.Marshal(v)
		if bytes.Contains(got, []byte(token)) || bytes.Contains(got, []byte(aws)) {
			t.Errorf("%s read back holds a credential: %.300s", name, got)
		}
	}
	if !strings.HasPrefix(out.Before.GPU, "NVIDIA H200 AKIA") || len(out.Before.Regions) != len(train.Before.Regions) {
		t.Errorf("the masked audit lost its GPU or regions: %q, %d regions", out.Before.GPU, len(out.Before.Regions))
	}
}

// TestReadRanksRowsAgree: the JSON of audit --ranks lists each rank's
// capture in its rows and holds each audited one's audit in its results;
// a file whose rows name an audit it does not hold, whose results hold an
// audit no row names, or that holds no rank at all was edited, and is
// refused rather than merged short of a rank.
func TestReadRanksRowsAgree(t *testing.T) {
	train, ok, err := ReadOutput(filepath.Join("..", "report", "testdata", "audits", "train.json"))
	if !ok || err != nil {
		t.Fatalf("the training pair: %v %v", ok, err)
	}
	b, _ := json.Marshal(FromAudit(train.Before))
	capture, _ := json.Marshal(train.Before.Capture)
	head := `{"kind": "audit-ranks", "schemaVersion": 1, "tool": {"name": "nsyscheck", "version": "x"}, "inputs": ["a"], `
	row := `{"capture": ` + string(capture) + `}`
	failed := `{"capture": "rank7.sqlite", "error": "rank7.sqlite: the file is empty"}`
	dir := t.TempDir()
	// Rewritten with its keys sorted, as jq -S writes it: the schema's
	// version past the head, after the results.
	// Eight ranks, so that the results pass the head.
	rows, results := []string{row}, []string{string(b)}
	for r := 1; r < 8; r++ {
		name := fmt.Sprintf("rank%d.sqlite", r)
		rows = append(rows, `{"capture": "`+name+`"}`)
		results = append(results, strings.ReplaceAll(string(b), train.Before.Capture, name))
	}
	body := `{"inputs": ["a"], "kind": "audit-ranks", "ranks": {"rows": [` + strings.Join(rows, ", ") + `]}, "results": [` + strings.Join(results, ", ") +
		`], "schemaVersion": 1, "tool": {"name": "nsyscheck", "version": "x"}}`
	if strings.Index(body, `"schemaVersion"`) < nsysdb.SniffSize {
		t.Fatalf("the sorted JSON's schemaVersion at byte %d, inside the head", strings.Index(body, `"schemaVersion"`))
	}
	sorted := filepath.Join(dir, "sorted.json")
	if err := os.WriteFile(sorted, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if audits, _, ok, err := ReadRanks(sorted); !ok || err != nil || len(audits) != 8 {
		t.Errorf("the ranks' JSON with its keys sorted: %d audits, want 8, %v %v", len(audits), ok, err)
	}
	// The row as audit --ranks writes it, every number, and with one
	// number edited.
	made := ranks.Summarize([]ranks.Audited{{Capture: train.Before.Capture, Audit: train.Before}}, ranks.DefaultThresholds)
	full, _ := json.Marshal(made.Rows[0])
	edited := strings.Replace(string(full), `"copies":207`, `"copies":1`, 1)
	if edited == string(full) {
		t.Fatalf("the training rank's row holds no \"copies\":207: %s", full)
	}
	for _, c := range []struct {
		name, body, want string
		ranks            int
	}{
		{"as written", `"results": [` + string(b) + `], "ranks": {"rows": [` + row + `]}`, "", 1},
		{"as written, every number", `"results": [` + string(b) + `], "ranks": {"rows": [` + string(full) + `]}`, "", 1},
		{"a row's copies edited", `"results": [` + string(b) + `], "ranks": {"rows": [` + edited + `]}`, "ranks.rows[0].copies of " + train.Before.Capture + " is 1, but the shard's audits give 207: the file was edited", 0},
		{"as written, a rank failed", `"results": [` + string(b) + `], "ranks": {"rows": [` + row + `, ` + failed + `]}`, "", 2},
		{"only failed ranks", `"results": [], "ranks": {"rows": [` + failed + `]}`, "", 1},
		{"results emptied", `"results": [], "ranks": {"rows": [` + row + `]}`, "ranks.rows[0] lists " + train.Before.Capture + " as audited, but no result holds its audit", 0},
		{"a row dropped", `"results": [` + string(b) + `], "ranks": {"rows": []}`, "no row of ranks.rows lists it", 0},
		{"the result twice, one row", `"results": [` + string(b) + `, ` + string(b) + `], "ranks": {"rows": [` + row + `]}`, "no row of ranks.rows lists it", 0},
		{"no rank at all", `"results": [], "ranks": {"rows": []}`, "hold no rank, audited or failed", 0},
	} {
		p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".json")
		if err := os.WriteFile(p, []byte(head+c.body+"}"), 0o644); err != nil {
			t.Fatal(err)
		}
		audits, fails, ok, err := ReadRanks(p)
		if !ok {
			t.Fatalf("%s: not read as the audits of a job's ranks", c.name)
		}
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			if len(audits)+len(fails) != c.ranks {
				t.Errorf("%s: %d audits and %d failed ranks, want %d in all", c.name, len(audits), len(fails), c.ranks)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: err %v, want one naming %s and %q", c.name, err, p, c.want)
		}
	}
}

// TestReadRefusesNulls reads the training audit with a null for one
// element of its lists: once a null class crashed the reader, and a null
// region or finding was rendered as a row of nothing.
func TestReadRefusesNulls(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "report", "testdata", "audits", "train.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cases := []struct {
		name, key, want string
	}{
		{"a null class", `"classes": [`, "classes[0] is null"},
		{"a null region", `"regions": [`, "regions[0] is null"},
		{"a null finding", `"findings": [`, "findings[0] is null"},
		{"a null evidence copy", `"evidence": [`, "findings[0].evidence[0] is null"},
	}
	for _, c := range cases {
		i := bytes.Index(data, []byte(c.key))
		if i < 0 {
			t.Fatalf("%s: train.json holds no %s", c.name, c.key)
		}
		edited := append(append(append([]byte{}, data[:i+len(c.key)]...), "null, "...), data[i+len(c.key):]...)
		p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".json")
		if err := os.WriteFile(p, edited, 0o644); err != nil {
			t.Fatal(err)
		}
		_, ok, err := ReadOutput(p)
		if !ok || err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), c.want) ||
			!strings.Contains(err.Error(), "the file was edited") {
			t.Errorf("%s: ok %v, err %v; want one naming %s and %q", c.name, ok, err, p, c.want)
		}
	}
}

func TestNullInArray(t *testing.T) {
	cases := []struct {
		in, at string
	}{
		{`{"a": [1, {"b": null}, "null"], "c": {"d": [[true, false], [null]]}}`, "c.d[1][0]"},
		{`{"k\"ey": ["x\"null", null]}`, `k"ey[1]`},
		{`{"a": null, "b": [{"c": null}]}`, ""},
		{`[{}, {}, null]`, "[2]"},
	}
	for _, c := range cases {
		at, ok := nullInArray([]byte(c.in))
		if at != c.at || ok != (c.at != "") {
			t.Errorf("nullInArray(%s) = %q, %v; want %q", c.in, at, ok, c.at)
		}
	}
}
