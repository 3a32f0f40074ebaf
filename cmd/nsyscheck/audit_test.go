package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/auditjson"
	"github.com/nsyscheck/nsyscheck/predictions"
)

// TestShareableAudit: a report's export cached in the user's cache folder is
// named as cache:..., never by the home folder's absolute path.
func TestShareableAudit(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	db := filepath.Join(cache, "nsyscheck", "exports", "app.nsyscheck.sqlite")
	au := &audit.Audit{Capture: "ro/app.nsys-rep", Files: []string{"ro/app.nsys-rep", db},
		NVIDIA: &audit.RuleComparison{Source: audit.RuleSource{Kind: audit.RuleSourceAnalyze, Path: db}}}
	out := &audit.Output{Before: au}
	out.MapPaths(sharePaths(cacheRule(nil)).apply)
	want := "cache:" + filepath.Join("nsyscheck", "exports", "app.nsyscheck.sqlite")
	if au.Files[0] != "ro/app.nsys-rep" || au.Files[1] != want || au.NVIDIA.Source.Path != want {
		t.Errorf("files %v, rule source %+v; want %s", au.Files, au.NVIDIA.Source, want)
	}
}

// TestSharePaths: the one rewriter names verify's input folder as given
// and the cache folder as cache:, in the result's paths and in the
// capture's own words it carries.
func TestSharePaths(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	dir := t.TempDir()
	in := filepath.Join(dir, "run", "pinned.sqlite")
	if err := os.MkdirAll(filepath.Dir(in), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(cache, "nsyscheck", "exports", "x.nsyscheck.sqlite")
	r := &predictions.Result{Input: predictions.Input{Path: in, Files: []string{in, db}},
		Claims: []predictions.Claim{{Why: []predictions.SourceWhy{{Source: predictions.SourceTrace,
			Why: predictions.NoAPITrace{Lacks: "no table in " + in}}}}}}
	r.MapPaths(shareInput(in, false, nil).apply)
	shown := shownPath(filepath.Join(dir, "run"))
	if want := filepath.Join(shown, "pinned.sqlite"); r.Input.Path != want || r.Input.Files[0] != want {
		t.Errorf("input %q, files %v; want %s", r.Input.Path, r.Input.Files, want)
	}
	if want := "cache:" + filepath.Join("nsyscheck", "exports", "x.nsyscheck.sqlite"); r.Input.Files[1] != want {
		t.Errorf("cached export %q, want %s", r.Input.Files[1], want)
	}
	if got := r.Claims[0].Why[0].Why.(predictions.NoAPITrace).Lacks; got != "no table in "+filepath.Join(shown, "pinned.sqlite") {
		t.Errorf("the capture's reason names %q", got)
	}
}

// TestAuditJSONReadBack: the JSON of every shipped pair's audit reads back
// with its check, which report makes again from the two audits and finds
// the same, verdict and numbers (auditjson.ReadOutput refuses one it does not).
func TestAuditJSONReadBack(t *testing.T) {
	pairs := [][2]string{{"train-pageable", "train-pinned"}, {"torch-prefetch-pageable", "torch-prefetch-pinned"},
		{"pipeline-pageable", "pipeline-pinned"}, {"cupy-pageable", "cupy-pinned"}, {"driver-pageable", "driver-pinned"},
		{"jax-cuda", "jax-cuda-pinned"}}
	for _, p := range pairs {
		code, out, stderr := runMain(t, []string{"audit", "../../testdata/captures/" + p[0], "../../testdata/captures/" + p[1],
			"--format", "json", "--nvidia-rule", "off"})
		if code != exitHeld && code != exitDied {
			t.Fatalf("audit %v: %d %s", p, code, stderr)
		}
		js := filepath.Join(t.TempDir(), "audit.json")
		if err := os.WriteFile(js, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		got, ok, err := auditjson.ReadOutput(js)
		if !ok || err != nil || got.Check == nil {
			t.Errorf("%v: read back %v %v", p, ok, err)
		}
	}
}

// TestAuditExpectAgainstMissing copies the shipped expected audit of the
// training capture, whose "against" names ../train-pinned, away from that
// capture: the audit is refused naming the expected-audit file, its key
// and the path it resolved, not as a missing input of the user's.
func TestAuditExpectAgainstMissing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "train-pageable")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	const shipped = "../../testdata/captures/train-pageable/"
	e := filepath.Join(dir, "audit-expect.json")
	writeFile(t, e, readFile(t, shipped+"audit-expect.json"))
	code, _, stderr := runMain(t, []string{"audit", shipped, "--expect", e, "--nvidia-rule", "off"})
	want := e + `: "against": "../train-pinned" names ` + filepath.Join(filepath.Dir(dir), "train-pinned") + " (relative to the file's folder), which does not exist"
	// The message is wrapped to the terminal's width.
	if code != exitError || !strings.Contains(strings.Join(strings.Fields(stderr), " "), want) {
		t.Errorf("exit %d, stderr %s; want %d and %q", code, stderr, exitError, want)
	}
}
