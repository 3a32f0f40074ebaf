package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/environ"
	"github.com/rogpeppe/go-internal/testscript"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

var (
	schemaOnce sync.Once
	schema     *jsonschema.Schema
	schemaErr  error
)

// outputSchema compiles docs/output.schema.json once.
func outputSchema() (*jsonschema.Schema, error) {
	schemaOnce.Do(func() {
		path, err := filepath.Abs(filepath.Join("..", "..", "docs", "output.schema.json"))
		if err != nil {
			schemaErr = err
			return
		}
		c := jsonschema.NewCompiler()
		schema, schemaErr = c.Compile(path)
	})
	if schemaErr != nil {
		return nil, fmt.Errorf("docs/output.schema.json: %w", schemaErr)
	}
	return schema, nil
}

// validateOutput checks one JSON output against the schema.
func validateOutput(data []byte) error {
	sch, err := outputSchema()
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return sch.Validate(v)
}

// TestJSONMatchesSchema validates verify's JSON for every shipped input,
// alone and several at once, and for the shipped capture with no argument.
func TestJSONMatchesSchema(t *testing.T) {
	t.Parallel()
	env := environ.With(map[string]string{"XDG_CACHE_HOME": t.TempDir()})
	root := filepath.Join("..", "..")
	var inputs []string
	for _, glob := range []string{"testdata/captures/*", "testdata/reference/*", "testdata/measurements/*.json", "testdata/exposure/*.sqlite",
		"testdata/captures/h200-pinned/pinned.transcript.txt", "testdata/captures/h200-pinned/pinned.results.json", "testdata/captures/h200-pinned/pinned.nsys-rep",
		"testdata/captures/torch-lesson/torch-lesson.nsys-rep", "testdata/fleet/*", "testdata/trace-lost/*"} {
		m, _ := filepath.Glob(filepath.Join(root, glob))
		for _, p := range m {
			st, err := os.Stat(p)
			if err != nil || filepath.Ext(p) == ".md" {
				continue
			}
			// A folder of one job's ranks holds a capture per rank, which
			// verify reads one by one.
			if ranks, _ := filepath.Glob(filepath.Join(p, "*.sqlite")); st.IsDir() && len(ranks) > 1 {
				inputs = append(inputs, ranks...)
				continue
			}
			inputs = append(inputs, p)
		}
	}
	if len(inputs) < 8 {
		t.Fatalf("found only %d inputs: %v", len(inputs), inputs)
	}
	t.Logf("%d inputs: %v", len(inputs), inputs)
	// Run folders of several GPUs: the envelope carries the fleet table.
	fleetRuns, _ := filepath.Glob(filepath.Join(root, "testdata", "fleet", "h200-*"))
	if len(fleetRuns) < 2 {
		t.Fatalf("found %d fleet run folders", len(fleetRuns))
	}
	runs := [][]string{nil, inputs[:3], fleetRuns}
	for _, in := range inputs {
		runs = append(runs, []string{in})
	}
	for _, args := range runs {
		var out, errOut bytes.Buffer
		status := Main(append([]string{"verify", "--format", "json"}, args...), Streams{In: strings.NewReader(""), Out: &out, Err: &errOut, Env: env})
		if status == exitError {
			t.Errorf("verify %v: exit %d: %s", args, status, errOut.String())
			continue
		}
		if err := validateOutput(out.Bytes()); err != nil {
			t.Errorf("verify %v: output does not match docs/output.schema.json: %v", args, err)
		}
		if hasFleet := strings.Contains(out.String(), `"fleet": {`); hasFleet != (len(args) > 1 && strings.Contains(args[0], "fleet")) {
			t.Errorf("verify %v: fleet in the envelope: %v", args, hasFleet)
		}
	}
}

// TestSchemaRejects checks that the schema is not vacuous: outputs with a
// wrong version, an array at the top, an unknown verdict or an absolute
// input path fail it.
func TestSchemaRejects(t *testing.T) {
	var out bytes.Buffer
	Main([]string{"verify", "--format", "json", filepath.Join("..", "..", "testdata", "measurements", "lesson-t4.json")}, Streams{In: strings.NewReader(""), Out: &out, Err: &bytes.Buffer{}})
	good := out.String()
	if err := validateOutput([]byte(good)); err != nil {
		t.Fatalf("the lesson's T4 output fails the schema: %v", err)
	}
	var fleetOut bytes.Buffer
	fleetRuns, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "fleet", "h200-*"))
	Main(append([]string{"verify", "--format", "json"}, fleetRuns...), Streams{In: strings.NewReader(""), Out: &fleetOut, Err: &bytes.Buffer{}})
	fleetGood := fleetOut.String()
	if err := validateOutput([]byte(fleetGood)); err != nil || !strings.Contains(fleetGood, `"outlier": true`) {
		t.Fatalf("the fleet output fails the schema or names no outlier: %v", err)
	}
	for name, bad := range map[string]string{
		"fleet row with an unknown field":  strings.Replace(fleetGood, `"outlier": true`, `"outlier": true, "extra": 1`, 1),
		"fleet finding of an unknown kind": strings.Replace(fleetGood, `"kind": "below-rated"`, `"kind": "slow"`, 1),
	} {
		if bad == fleetGood {
			t.Fatalf("%s: the replacement changed nothing", name)
		}
		if err := validateOutput([]byte(bad)); err == nil {
			t.Errorf("%s: the schema accepts it", name)
		}
	}
	for name, bad := range map[string]string{
		"another version": strings.Replace(good, `"schemaVersion": 1`, `"schemaVersion": 2`, 1),
		"a bare array":    "[" + good + "]",
		"unknown verdict": strings.Replace(good, `"verdict": "died"`, `"verdict": "dead"`, 1),
		"absolute path":   strings.Replace(good, `"path": "`, `"path": "/home/someone/`, 1),
		"unknown field":   strings.Replace(good, `"schemaVersion": 1,`, `"schemaVersion": 1, "extra": true,`, 1),
	} {
		if bad == good {
			t.Fatalf("%s: the replacement changed nothing", name)
		}
		if err := validateOutput([]byte(bad)); err == nil {
			t.Errorf("%s: the schema accepts it", name)
		}
	}
}

// cmdSchema is the testscript command "schema FILE": FILE is JSON output
// that matches docs/output.schema.json.
func cmdSchema(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: schema FILE")
	}
	data := []byte(ts.ReadFile(args[0]))
	err := validateOutput(data)
	if neg && err == nil {
		ts.Fatalf("%s matches the schema", args[0])
	}
	if !neg && err != nil {
		ts.Fatalf("%s does not match docs/output.schema.json: %v", args[0], err)
	}
}

// TestSchemaStructureFields checks the schema's part for controls, unchecked
// controls and files set aside beside a capture: the outputs that carry them
// match it, and a control marked false, an empty unchecked line or an
// absolute set-aside path fail it.
func TestSchemaStructureFields(t *testing.T) {
	verifyJSON := func(path string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := Main([]string{"verify", "--format", "json", path}, Streams{In: strings.NewReader(""), Out: &out, Err: &errOut}); code == exitError {
			t.Fatalf("verify %s: exit %d: %s", path, code, errOut.String())
		}
		if err := validateOutput(out.Bytes()); err != nil {
			t.Fatalf("verify %s: output does not match docs/output.schema.json: %v", path, err)
		}
		return out.String()
	}
	captures := filepath.Join("..", "..", "testdata", "captures")
	torch := verifyJSON(filepath.Join(captures, "torch-lesson", "torch-lesson.nsys-rep"))
	set := verifyJSON(filepath.Join(captures, "h200-lesson-set"))
	for _, want := range []struct{ out, field string }{
		{torch, `"control": true`}, {torch, `"setAside": [`}, {torch, `"code": "input-substituted"`},
		{torch, `"code": "sibling-set-aside"`}, {set, `"unchecked": [`},
	} {
		if !strings.Contains(want.out, want.field) {
			t.Errorf("output lacks %s", want.field)
		}
	}
	for name, bad := range map[string]string{
		"a control marked false":  strings.Replace(torch, `"control": true`, `"control": false`, 1),
		"an absolute set-aside":   strings.Replace(torch, `"setAside": [`+"\n"+`          {`+"\n"+`            "path": "`, `"setAside": [`+"\n"+`          {`+"\n"+`            "path": "/home/someone/`, 1),
		"an empty unchecked line": strings.Replace(set, `"bytes unchecked: no per-copy records; add cuda_gpu_trace"`, `""`, 1),
	} {
		if bad == torch || bad == set {
			t.Fatalf("%s: the replacement changed nothing", name)
		}
		if err := validateOutput([]byte(bad)); err == nil {
			t.Errorf("%s: the schema accepts it", name)
		}
	}
}

// auditJSON runs audit --format json in the environment env (nil: the
// process's) and returns its output and status.
func auditJSON(t *testing.T, env environ.Env, args ...string) (string, int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	status := Main(append([]string{"audit", "--format", "json"}, args...), Streams{In: strings.NewReader(""), Out: &out, Err: &errOut, Env: env})
	return out.String(), status, errOut.String()
}

// TestAuditJSONMatchesSchema validates audit's JSON against
// docs/output.schema.json for every shipped capture the audit reads (SQLite
// exports, a .nsys-rep read through the export beside it, CSV reports),
// the before/after pair in both orders, a run folder's rates, NVIDIA's
// rule off; inputs that cannot be read print no JSON at all.
func TestAuditJSONMatchesSchema(t *testing.T) {
	t.Parallel()
	env := environ.With(map[string]string{"XDG_CACHE_HOME": t.TempDir()})
	root := filepath.Join("..", "..")
	captures := filepath.Join(root, "testdata", "captures")
	var runs [][]string
	dirs, _ := filepath.Glob(filepath.Join(captures, "*"))
	refs, _ := filepath.Glob(filepath.Join(root, "testdata", "reference", "*"))
	for _, d := range append(dirs, refs...) {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			runs = append(runs, []string{d})
		}
	}
	// A folder of the CSV reports alone.
	csv := t.TempDir()
	for _, r := range []string{"cuda_api_trace", "cuda_gpu_trace", "nvtx_pushpop_trace"} {
		data, err := os.ReadFile(filepath.Join(captures, "train-pageable", "train-pageable_"+r+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(csv, "train_"+r+".csv"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pageable, pinned := filepath.Join(captures, "train-pageable"), filepath.Join(captures, "train-pinned")
	runs = append(runs, []string{csv}, []string{pageable, pinned}, []string{pinned, pageable},
		[]string{filepath.Join(pageable, "train-pageable.nsys-rep")},
		[]string{filepath.Join(captures, "h200-pinned", "pinned.sqlite"), "--rates", filepath.Join(captures, "h200-run")},
		[]string{pageable, "--nvidia-rule", "off"})
	// A check whose capture before lacks its CUDA event records: its
	// regions' unresolved waits and why unresolved.
	unrecorded := pairEdit("pipeline", `DROP TABLE CUPTI_ACTIVITY_KIND_CUDA_EVENT`)(t, t.TempDir())
	runs = append(runs, unrecorded[:2])
	// An audit whose kernels end when they start: coverage's zeroKernels.
	// An audit whose kernels and copy calls end when they start:
	// coverage's zeroKernels and zeroCopyCalls.
	runs = append(runs, shippedEdit("h200-pinned/pinned.sqlite", `UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = start WHERE rowid <= 2`,
		`UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET "end" = start WHERE nameId IN `+asyncIDs)(t, t.TempDir()))
	valid, refused, substituted, unresolved, zeroKernels := 0, 0, false, false, false
	for _, args := range runs {
		out, status, errOut := auditJSON(t, env, args...)
		if status == exitError {
			// An input the audit refuses: the reason on stderr, and a JSON
			// document of the refusal.
			if err := validateOutput([]byte(out)); err != nil || !strings.Contains(out, `"refused": {`) || errOut == "" {
				t.Errorf("audit %v: exit 2 with stdout %q (%v), stderr %q", args, out, err, errOut)
			}
			refused++
			continue
		}
		if err := validateOutput([]byte(out)); err != nil {
			t.Errorf("audit %v: output does not match docs/output.schema.json: %v", args, err)
			continue
		}
		valid++
		substituted = substituted || strings.Contains(out, `"code": "input-substituted"`)
		unresolved = unresolved || strings.Contains(out, `"why": "unresolved"`) && strings.Contains(out, `"unresolved": {`)
		zeroKernels = zeroKernels || strings.Contains(out, `"zeroKernels": 2`) && strings.Contains(out, `"code": "kernel-zero-time"`) &&
			strings.Contains(out, `"zeroCopyCalls": `) && strings.Contains(out, `"code": "copy-call-zero-time"`)
		if strings.Contains(out, `\u003c`) || strings.Contains(out, `\u003e`) {
			t.Errorf("audit %v: HTML-escaped JSON", args)
		}
	}
	t.Logf("%d audits validated, %d refusals", valid, refused)
	if valid < 10 || refused < 2 || !substituted || !unresolved || !zeroKernels {
		t.Errorf("only %d audits and %d refusals validated (input-substituted seen: %v, unresolved waits seen: %v, kernels of no time seen: %v)", valid, refused, substituted, unresolved, zeroKernels)
	}
	// An input that cannot be read is refused as unreadable.
	if out, status, _ := auditJSON(t, env, filepath.Join(t.TempDir(), "none")); status != exitError || !strings.Contains(out, `"code": "unreadable"`) || validateOutput([]byte(out)) != nil {
		t.Errorf("missing input: exit %d, stdout %q", status, out)
	}
}

// TestAuditSchemaRejects checks that the schema's audit part is not
// vacuous.
func TestAuditSchemaRejects(t *testing.T) {
	captures := filepath.Join("..", "..", "testdata", "captures")
	two, _, _ := auditJSON(t, nil, filepath.Join(captures, "train-pageable"), filepath.Join(captures, "train-pinned"))
	one, _, _ := auditJSON(t, nil, filepath.Join(captures, "train-pageable"))
	for _, good := range []string{one, two} {
		if err := validateOutput([]byte(good)); err != nil {
			t.Fatalf("the train captures' audit fails the schema: %v", err)
		}
	}
	checkAt := strings.Index(two, `  "check": {`)
	if checkAt < 0 {
		t.Fatal("no check in the audit of two captures")
	}
	for name, bad := range map[string]string{
		"the earlier version":       strings.Replace(one, `"schemaVersion": 1`, `"schemaVersion": "nsyscheck.audit/v1"`, 1),
		"an unknown kind":           strings.Replace(one, `"kind": "audit"`, `"kind": "audits"`, 1),
		"an unknown audit field":    strings.Replace(one, `"apiCalls": `, `"calls": 1, "apiCalls": `, 1),
		"an absolute capture":       strings.Replace(one, `"capture": "`, `"capture": "/home/someone/`, 1),
		"an unknown size bucket":    strings.Replace(one, `"sizeBucket": "1MiB-16MiB"`, `"sizeBucket": "big"`, 1),
		"an unknown finding":        strings.Replace(one, `"id": "cannot-overlap"`, `"id": "slow"`, 1),
		"a check of one capture":    strings.TrimSuffix(strings.TrimSpace(one), "}") + `, "check": ` + strings.TrimSuffix(strings.TrimSpace(two[checkAt+len(`  "check": `):]), "}") + "}",
		"an audit without a check":  two[:strings.LastIndex(two[:checkAt], ",")] + "\n}\n",
		"an unknown check verdict":  two[:checkAt] + strings.Replace(two[checkAt:], `"verdict": "unavailable"`, `"verdict": "fine"`, 1),
		"an unknown class status":   strings.Replace(two, `"status": "still pageable"`, `"status": "half"`, 1),
		"verify's kind with audits": strings.Replace(one, `"kind": "audit"`, `"kind": "verify"`, 1),
	} {
		if bad == one || bad == two {
			t.Fatalf("%s: the replacement changed nothing", name)
		}
		if err := validateOutput([]byte(bad)); err == nil {
			t.Errorf("%s: the schema accepts it", name)
		}
	}
}
