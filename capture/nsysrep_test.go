package capture

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nsyscheck/nsyscheck/exportcache"
	"github.com/nsyscheck/nsyscheck/internal/fixture"
	"github.com/nsyscheck/nsyscheck/internal/golden"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/internal/sqlitefile"

	"github.com/nsyscheck/nsyscheck/internal/nsys"
)

var refReport = filepath.Join("..", "testdata", "reference", "h200-ref", "ref.nsys-rep")

// shq quotes s for a POSIX shell.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// fakeNsys writes an nsys stand-in that logs each call's arguments to a file
// and then behaves as mode says:
//
//	copy     copies the reference export to the --output path
//	append   copies it to the --output path with .sqlite appended
//	old      answers like an nsys too old for the report
//	fail     prints an error and exits 3
//	garbage  writes a file that is not SQLite
//	nothing  succeeds without writing anything
func fakeNsys(t *testing.T, mode string) (nsys, calls string) {
	t.Helper()
	dir := t.TempDir()
	calls = filepath.Join(dir, "calls.log")
	ref, err := filepath.Abs(refSQLite)
	if err != nil {
		t.Fatal(err)
	}
	action := map[string]string{
		"copy":    `cp ` + shq(ref) + ` "$out"; echo "Generated: $out"`,
		"append":  `cp ` + shq(ref) + ` "$out.sqlite"`,
		"old":     `echo "Importer error status: Version not supported."; exit 1`,
		"fail":    `echo "ERROR: something is wrong with this report" >&2; exit 3`,
		"garbage": `echo "not a database" > "$out"`,
		"nothing": `:`,
	}[mode]
	if action == "" {
		t.Fatalf("unknown fake nsys mode %q", mode)
	}
	script := `#!/bin/sh
echo "$*" >> ` + shq(calls) + `
if [ "$1" = "--version" ]; then echo "NVIDIA Nsight Systems version 2022.4.2.1-df9881f"; exit 0; fi
out=""
while [ $# -gt 0 ]; do
  case "$1" in --output) out="$2"; shift;; esac
  shift
done
` + action + "\n"
	nsys = filepath.Join(dir, "nsys")
	if err := os.WriteFile(nsys, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return nsys, calls
}

// exportCalls counts the export calls the fake nsys has seen.
func exportCalls(t *testing.T, calls string) int {
	t.Helper()
	b, err := os.ReadFile(calls)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "export ")
}

// reportCopy copies the reference report into a fresh folder, dated an hour
// ago, and returns its path, bytes and modification time.
func reportCopy(t *testing.T, name string) (path string, orig []byte, mtime time.Time) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "reports")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(dir, name)
	fixture.Copy(t, refReport, path)
	mtime = time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	orig, _ = os.ReadFile(path)
	return path, orig, mtime
}

func checkReportUnchanged(t *testing.T, path string, orig []byte, mtime time.Time) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, orig) {
		t.Error("the report's bytes changed")
	}
	info, _ := os.Stat(path)
	if !info.ModTime().Equal(mtime) {
		t.Errorf("the report's mtime changed: %v -> %v", mtime, info.ModTime())
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestLoadNsysRepExportsAndCaches(t *testing.T) {
	nsys, calls := fakeNsys(t, "copy")
	report, orig, mtime := reportCopy(t, "my run.nsys-rep")
	dir := filepath.Dir(report)
	cache := filepath.Join(dir, "my run.nsyscheck.sqlite")

	c, err := loadNsysRep(report, Options{Nsys: nsys})
	if err != nil {
		t.Fatal(err)
	}
	if c.Format != FormatNsysRep || c.Path != report || len(c.Files) != 2 || c.Files[0] != report || c.Files[1] != cache {
		t.Errorf("format %s path %s files %v", c.Format, c.Path, c.Files)
	}
	if len(c.Calls) != 444 || c.Memcpys.Len() != 289 || len(c.Ranges) != 8 || c.Meta.GPU != "NVIDIA H200" {
		t.Errorf("calls %d memcpys %d ranges %d meta %+v", len(c.Calls), c.Memcpys.Len(), len(c.Ranges), c.Meta)
	}
	if got := strings.Join(dirNames(t, dir), "|"); got != "my run.nsys-rep|my run.nsyscheck.sqlite" {
		t.Errorf("folder holds %s", got)
	}
	log, _ := os.ReadFile(calls)
	if !strings.HasPrefix(string(log), "export --type sqlite --force-overwrite true --output "+dir+string(filepath.Separator)) ||
		!strings.HasSuffix(strings.TrimSpace(string(log)), " "+report) {
		t.Errorf("nsys called as %q", log)
	}
	checkReportUnchanged(t, report, orig, mtime)

	// The second load reuses the export, with the same filter semantics.
	c, err = loadNsysRep(report, Options{Nsys: nsys, APINames: []string{"cudaMemcpyAsync"}})
	if err != nil {
		t.Fatal(err)
	}
	if n := exportCalls(t, calls); n != 1 {
		t.Errorf("nsys called %d times, want 1 (cache not reused)", n)
	}
	if len(c.Calls) != 22 || c.Format != FormatNsysRep {
		t.Errorf("cached load: %d calls, format %s", len(c.Calls), c.Format)
	}

	// The cache is keyed by content: a report only touched is not exported
	// again...
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(report, future, future); err != nil {
		t.Fatal(err)
	}
	if _, err := loadNsysRep(report, Options{Nsys: nsys}); err != nil {
		t.Fatal(err)
	}
	if n := exportCalls(t, calls); n != 1 {
		t.Errorf("nsys called %d times, want 1 for a report only touched", n)
	}
	// ...and one replaced by another report that keeps an older time (as
	// cp -p does) is.
	if err := os.WriteFile(report, append(orig, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(report, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	if _, err := loadNsysRep(report, Options{Nsys: nsys}); err != nil {
		t.Fatal(err)
	}
	if n := exportCalls(t, calls); n != 2 {
		t.Errorf("nsys called %d times, want 2 after the report was replaced by an older-dated one", n)
	}
}

func TestLoadNsysRepDamagedCache(t *testing.T) {
	nsys, calls := fakeNsys(t, "copy")
	report, _, _ := reportCopy(t, "ref.nsys-rep")
	cache := filepath.Join(filepath.Dir(report), "ref.nsyscheck.sqlite")
	if err := os.WriteFile(cache, []byte("half an export"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := loadNsysRep(report, Options{Nsys: nsys})
	if err != nil {
		t.Fatal(err)
	}
	if exportCalls(t, calls) != 1 || len(c.Calls) != 444 {
		t.Errorf("exports %d calls %d", exportCalls(t, calls), len(c.Calls))
	}
	if err := sqlitefile.CheckPath(cache); err != nil {
		t.Errorf("cache not replaced: %v", err)
	}
}

func TestLoadNsysRepReadOnlyFolder(t *testing.T) {
	nsys, calls := fakeNsys(t, "copy")
	userCache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", userCache)
	t.Setenv("HOME", userCache)
	report, orig, mtime := reportCopy(t, "ref.nsys-rep")
	dir := filepath.Dir(report)
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })

	for i := 0; i < 2; i++ {
		c, err := loadNsysRep(report, Options{Nsys: nsys})
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Calls) != 444 || len(c.Files) != 2 ||
			!strings.HasPrefix(c.Files[1], filepath.Join(userCache, "nsyscheck")+string(filepath.Separator)) {
			t.Errorf("calls %d files %v", len(c.Calls), c.Files)
		}
	}
	if n := exportCalls(t, calls); n != 1 {
		t.Errorf("nsys called %d times, want 1", n)
	}
	if got := dirNames(t, dir); len(got) != 1 {
		t.Errorf("read-only folder now holds %v", got)
	}
	if got := dirNames(t, filepath.Join(userCache, "nsyscheck")); len(got) != 1 {
		t.Errorf("cache folder holds %v, want one export", got)
	}
	checkReportUnchanged(t, report, orig, mtime)
}

func TestLoadNsysRepCacheDir(t *testing.T) {
	nsys, _ := fakeNsys(t, "append")
	report, orig, mtime := reportCopy(t, "ref.nsys-rep")
	cacheDir := filepath.Join(t.TempDir(), "cache", "nested")
	c, err := loadNsysRep(report, Options{Nsys: nsys, CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Calls) != 444 || filepath.Dir(c.Files[1]) != cacheDir ||
		!strings.HasPrefix(filepath.Base(c.Files[1]), "ref-") {
		t.Errorf("calls %d files %v", len(c.Calls), c.Files)
	}
	if got := dirNames(t, filepath.Dir(report)); len(got) != 1 {
		t.Errorf("report folder holds %v", got)
	}
	if got := dirNames(t, cacheDir); len(got) != 1 {
		t.Errorf("cache folder holds %v", got)
	}
	checkReportUnchanged(t, report, orig, mtime)
}

func TestLoadNsysRepErrors(t *testing.T) {
	cases := []struct {
		mode      string
		fragments []string
	}{
		{"old", []string{"too old", "version 2022.4.2.1", "Version not supported", "2025.3 or newer", ".sqlite"}},
		{"fail", []string{"export failed", "something is wrong with this report", "exit status 3"}},
		{"garbage", []string{"damaged SQLite file", "not an SQLite database"}},
		{"nothing", []string{"wrote no SQLite file"}},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			nsys, _ := fakeNsys(t, tc.mode)
			report, orig, mtime := reportCopy(t, "ref.nsys-rep")
			_, err := loadNsysRep(report, Options{Nsys: nsys})
			if err == nil || !inputerr.Is(err) {
				t.Fatalf("err = %v, want an *inputerr.Error", err)
			}
			t.Log(err)
			for _, f := range append([]string{report}, tc.fragments...) {
				if !strings.Contains(err.Error(), f) {
					t.Errorf("error lacks %q: %v", f, err)
				}
			}
			if got := dirNames(t, filepath.Dir(report)); len(got) != 1 {
				t.Errorf("a failed export left %v", got)
			}
			checkReportUnchanged(t, report, orig, mtime)
		})
	}
}

func TestLoadNsysRepNotAReport(t *testing.T) {
	nsys, calls := fakeNsys(t, "fail")
	dir := t.TempDir()
	for name, body := range map[string][]byte{
		"empty.nsys-rep": nil,
		"zeros.nsys-rep": make([]byte, 4096),
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := loadNsysRep(p, Options{Nsys: nsys})
		if err == nil || !inputerr.Is(err) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "not an Nsight Systems report") {
			t.Errorf("%s: %v", name, err)
		}
	}
	text := filepath.Join(dir, "notes.nsys-rep")
	os.WriteFile(text, []byte("hello"), 0o644)
	_, err := loadNsysRep(text, Options{Nsys: nsys})
	if err == nil || !strings.Contains(err.Error(), "does not start like an Nsight Systems report") {
		t.Errorf("text file: %v", err)
	}
	if _, err := loadNsysRep(filepath.Join(dir, "missing.nsys-rep"), Options{Nsys: nsys}); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
	if n := exportCalls(t, calls); n != 1 {
		t.Errorf("nsys called %d times, want 1 (only for the text file)", n)
	}

	// An SQLite export named like a report loads without nsys.
	renamed := filepath.Join(dir, "export.nsys-rep")
	fixture.Copy(t, refSQLite, renamed)
	c, err := loadNsysRep(renamed, Options{Nsys: nsys})
	if err != nil || len(c.Calls) != 444 || c.Format != FormatSQLite {
		t.Errorf("renamed export: %v", err)
	}
}

func TestLoadNsysRepNoNsys(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("NSYS", "")
	t.Cleanup(nsys.SetInstallGlobs([]string{filepath.Join(t.TempDir(), "*", "bin", "nsys")}))

	report, _, _ := reportCopy(t, "ref.nsys-rep")
	_, err := loadNsysRep(report, Options{})
	if err == nil || !inputerr.Is(err) {
		t.Fatalf("err = %v", err)
	}
	t.Log(err)
	for _, f := range []string{report, "no nsys found", "Nsight Systems 2025.3 or newer", "--nsys", ".sqlite"} {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error lacks %q: %v", f, err)
		}
	}
	_, err = loadNsysRep(report, Options{Nsys: "/no/such/nsys"})
	if err == nil || !strings.Contains(err.Error(), "/no/such/nsys") {
		t.Errorf("bad --nsys: %v", err)
	}
}

// TestLoadNsysRepRealNsys exports the reference report with a real nsys
// (2025.3 or newer) when NSYSCHECK_REAL_NSYS=1, and checks that the result
// matches the shipped SQLite export.
func TestLoadNsysRepRealNsys(t *testing.T) {
	if os.Getenv("NSYSCHECK_REAL_NSYS") == "" {
		t.Skip("set NSYSCHECK_REAL_NSYS=1 to run the real nsys")
	}
	bin, err := exportcache.FindNsys("", nil)
	if err != nil {
		t.Fatal(err)
	}
	report, orig, mtime := reportCopy(t, "ref.nsys-rep")
	c, err := loadNsysRep(report, Options{Nsys: bin})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("nsys %s%s exported %s", bin, nsys.Version(context.Background(), bin), c.Files[1])
	got := string(sqliteSummary(c))
	want := string(sqliteSummary(sqLoad(t, refSQLite, Options{})))
	// The export's own product version may differ from the one that made ref.sqlite.
	cut := func(s string) string { return s[strings.Index(s, "\nschema:"):] }
	if strings.TrimPrefix(got, "format: nsys-rep") == got || cut(got) != cut(want) {
		t.Errorf("real export differs from ref.sqlite:\n%s", golden.FirstDiff(cut(want), cut(got)))
	}
	checkReportUnchanged(t, report, orig, mtime)
	if _, err := loadNsysRep(report, Options{Nsys: bin}); err != nil {
		t.Fatal(err)
	}
	if names := dirNames(t, filepath.Dir(report)); len(names) != 2 {
		t.Errorf("report folder holds %v", names)
	}
}

// TestLoadNsysRepExportBeside checks the export beside a report: read
// without nsys while it is not older than the report, with a note; when it
// is older, nsys exports the report, and only a missing or too old nsys
// sends us back to that export, with a warning; a named nsys that cannot run
// stays an error then.
func TestLoadNsysRepExportBeside(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("NSYS", "")
	t.Cleanup(nsys.SetInstallGlobs([]string{filepath.Join(t.TempDir(), "*", "bin", "nsys")}))

	report, orig, mtime := reportCopy(t, "ref.nsys-rep")
	beside := filepath.Join(filepath.Dir(report), "ref.sqlite")
	fixture.Copy(t, refSQLite, beside)

	c, err := loadNsysRep(report, Options{})
	if err != nil {
		t.Fatalf("no nsys, export beside: %v", err)
	}
	if len(c.Calls) != 444 || c.Path != report || len(c.Files) != 2 || c.Files[1] != beside {
		t.Errorf("loaded %d calls from %v (path %s); want the reference's 444 from %s", len(c.Calls), c.Files, c.Path, beside)
	}
	if len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "read ref.sqlite, the SQLite export made from this report, instead of exporting the report again") {
		t.Errorf("notes = %q", c.Notes)
	}
	// A current export is read whatever nsys is named.
	old, calls := fakeNsys(t, "old")
	if c, err = loadNsysRep(report, Options{Nsys: old}); err != nil || len(c.Notes) != 1 {
		t.Fatalf("current export, nsys too old: err %v", err)
	}
	if b, _ := os.ReadFile(calls); len(b) != 0 {
		t.Errorf("nsys ran although the export beside the report is current: %s", b)
	}

	// An export older than the report: nsys is asked first.
	older := mtime.Add(-time.Hour)
	if err := os.Chtimes(beside, older, older); err != nil {
		t.Fatal(err)
	}
	c, err = loadNsysRep(report, Options{})
	if err != nil || len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "read ref.sqlite, the SQLite export beside the report, because no nsys was found") ||
		!strings.Contains(c.Notes[0], "older than the report") {
		t.Errorf("older export, no nsys: err %v, notes %q", err, c.Notes)
	}
	c, err = loadNsysRep(report, Options{Nsys: old})
	if err != nil {
		t.Fatalf("older export, nsys too old: %v", err)
	}
	if len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "because the nsys found (version 2022.4.2.1-df9881f) is too old to export it") {
		t.Errorf("notes = %q", c.Notes)
	}
	if b, _ := os.ReadFile(calls); len(b) == 0 {
		t.Errorf("nsys was not asked although the export beside the report is older than it")
	}

	if _, err := loadNsysRep(report, Options{Nsys: "/no/such/nsys"}); err == nil || !strings.Contains(err.Error(), "/no/such/nsys") {
		t.Errorf("a named nsys that cannot run: err = %v, want it reported", err)
	}
	checkReportUnchanged(t, report, orig, mtime)
	// Nothing but the report and its export: no cache file was written.
	if got := dirNames(t, filepath.Dir(report)); len(got) != 2 {
		t.Errorf("folder holds %v", got)
	}
}

// TestNsysRepSiblingExport: a .nsys-rep with its plain SQLite export beside
// it (what nsys export writes by default) is read through that export, with
// no nsys and no file written; an export of another report is not taken.
func TestNsysRepSiblingExport(t *testing.T) {
	noNsys := Options{Nsys: filepath.Join(t.TempDir(), "no-nsys-here")}
	dir := copyFiles(t, "../testdata/captures/torch-lesson", "torch-lesson.nsys-rep", "torch-lesson.sqlite")
	c, err := Load(filepath.Join(dir, "torch-lesson.nsys-rep"), noNsys)
	if err != nil {
		t.Fatalf("the export beside the report was not used: %v", err)
	}
	if c.Format != FormatNsysRep || len(c.Files) != 2 || filepath.Base(c.Files[1]) != "torch-lesson.sqlite" {
		t.Errorf("format %s, files %v", c.Format, c.Files)
	}
	if len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "read torch-lesson.sqlite, the SQLite export made from this report") {
		t.Errorf("notes = %q, want one naming the export read", c.Notes)
	}
	ref, err := LoadSQLite(filepath.Join(dir, "torch-lesson.sqlite"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Calls) != len(ref.Calls) || c.Memcpys.Len() != ref.Memcpys.Len() || len(c.Calls) == 0 {
		t.Errorf("%d calls, %d copies; the export has %d, %d", len(c.Calls), c.Memcpys.Len(), len(ref.Calls), ref.Memcpys.Len())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("files written beside the report: %v", entries)
	}

	// The export of another report, under this report's name, is not taken.
	other := t.TempDir()
	for from, to := range map[string]string{"torch-lesson.nsys-rep": "x.nsys-rep", "torch-lesson.sqlite": "x.sqlite"} {
		b, err := os.ReadFile(filepath.Join(dir, from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(other, to), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Load(filepath.Join(other, "x.nsys-rep"), noNsys); err == nil || !strings.Contains(err.Error(), "nsys") {
		t.Errorf("an export made from torch-lesson.nsys-rep was taken for x.nsys-rep: %v", err)
	}
}

// loadNsysRep reads a report as Load reads a path of that kind, whatever
// its bytes hold (the stand-in reports are not real ones).
func loadNsysRep(path string, opts Options) (*Capture, error) {
	return loadAs(path, opts, nsysdb.KindNsysRep)
}
