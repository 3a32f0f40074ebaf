package privacy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/diag"

	"github.com/nsyscheck/nsyscheck/capture"

	"github.com/nsyscheck/nsyscheck/internal/fixture"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

// The planted values of the synthetic fixture. None may ever appear in a
// message, and none may survive Scrub anywhere in the output file.
const (
	fakeToken  = "nsc-fake-4f2a9c7e1b"
	otherKey   = "colleague-secret-9z8y7x6w"
	urlPass    = "hunter2pw-77aa"
	staleToken = "stale-9f8e7d6c5b4a3210"
	otherPID   = 4242
	otherName  = "colleague-job"
)

// cleanCaptures lists the shipped SQLite exports, all made with a minimal
// environment and no other process.
func cleanCaptures(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, pat := range []string{"../testdata/captures/*/*.sqlite", "../testdata/reference/*/*.sqlite"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) == 0 {
		t.Fatal("no SQLite captures under testdata/captures or testdata/reference")
	}
	return out
}

func TestScanCleanCaptures(t *testing.T) {
	for _, p := range cleanCaptures(t) {
		t.Run(p, func(t *testing.T) {
			r, err := ScanPath(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			if !r.Clean() || len(r.Diagnostics()) != 0 {
				for _, d := range r.Diagnostics() {
					t.Errorf("%s", detailText(d))
				}
				t.Fatalf("clean capture has %d findings", len(r.Findings))
			}
			if len(r.ProfiledPIDs) != 1 {
				t.Errorf("profiled pids = %v, want one", r.ProfiledPIDs)
			}
			if len(r.Notes) != 0 {
				t.Errorf("notes: %v", r.Notes)
			}
			// The raw scan of the matching .nsys-rep is clean too.
			reps, _ := filepath.Glob(filepath.Join(filepath.Dir(p), "*.nsys-rep"))
			for _, rep := range reps {
				rr, err := ScanPath(context.Background(), rep)
				if err != nil {
					t.Fatal(err)
				}
				if rr.Format != "nsys-rep" || !rr.Clean() {
					t.Errorf("%s: format %s, %d findings: %+v", rep, rr.Format, len(rr.Findings), rr.Findings)
				}
			}
		})
	}
}

// exposedFixture copies a clean capture into dir and plants in it what an
// unisolated capture records: a token and a note in the environment, an
// extra process with a secret in its environment block, a credential URL
// on the command line and a deleted row whose bytes linger in free pages.
func exposedFixture(t *testing.T, dir string) string {
	t.Helper()
	src := "../testdata/captures/h200-pinned/pinned.sqlite"
	dst := filepath.Join(dir, "exposed.sqlite")
	if err := copyFile(src, nil, dst); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", nsysdb.URI(dst, "mode=rw"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	stale := "STALE_API_TOKEN=" + staleToken + "\x00" + strings.Repeat("PADDING=x\x00", 1200)
	stmts := []struct {
		q    string
		args []any
	}{
		{`PRAGMA secure_delete = OFF`, nil},
		{`UPDATE TARGET_INFO_SYSTEM_ENV SET value = value || ? WHERE name = 'DeviceEnvironment'`,
			[]any{";NSC_FAKE_TOKEN=" + fakeToken + ";NSC_NOTE=hello colleague;PWD=/home/alice/course"}},
		{`INSERT INTO META_DATA_CAPTURE (name, value) VALUES ('PROCESS_0:ENVIRONMENT_VARIABLE', ?)`,
			[]any{`NSC_FAKE_TOKEN="` + fakeToken + `"`}},
		{`INSERT INTO META_DATA_CAPTURE (name, value) VALUES ('PROCESS_1:COMMAND', ?)`,
			[]any{"./sync --db postgres://app:" + urlPass + "@db.internal/x"}},
		{`INSERT INTO PROCESSES (globalPid, pid, name) VALUES (?, ?, ?)`,
			[]any{int64(otherPID)<<24 | 1<<48, otherPID, otherName}},
		{`INSERT INTO ThreadNames (nameId, priority, globalTid) VALUES (900001, 0, ?)`,
			[]any{int64(otherPID)<<24 | 1<<48 | otherPID}},
		{`INSERT INTO StringIds (id, value) VALUES (900001, ?)`, []any{otherName}},
		{`INSERT INTO StringIds (id, value) VALUES (900002, ?)`,
			[]any{"SECRET_KEY=" + otherKey + "\x00USER=bob\x00PATH=/usr/bin"}},
		{`INSERT INTO StringIds (id, value) VALUES (900003, ?)`, []any{stale}},
		{`DELETE FROM StringIds WHERE id = 900003`, nil},
	}
	for _, s := range stmts {
		if _, err := db.Exec(s.q, s.args...); err != nil {
			t.Fatalf("%s: %v", s.q, err)
		}
	}
	var free int
	if err := db.QueryRow(`PRAGMA freelist_count`).Scan(&free); err != nil || free == 0 {
		t.Fatalf("fixture has no free pages (freelist_count %d, %v)", free, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte(staleToken)) {
		t.Fatal("the deleted row left no bytes behind; the fixture does not test free pages")
	}
	return dst
}

func hashFile(t *testing.T, p string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func find(r *Report, kind Kind, name string, unused bool) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Kind == kind && f.Name == name && f.Unused == unused {
			out = append(out, f)
		}
	}
	return out
}

func TestScanExposedFixture(t *testing.T) {
	p := exposedFixture(t, t.TempDir())
	before := hashFile(t, p)
	r, err := ScanPath(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if hashFile(t, p) != before {
		t.Fatal("Scan changed the file")
	}

	tok := find(r, KindSecret, "NSC_FAKE_TOKEN", false)
	wheres := map[string]bool{}
	for _, f := range tok {
		wheres[f.Where] = true
		if f.Masked != "…(19 chars)" { // none of the value shows
			t.Errorf("masked token = %q", f.Masked)
		}
	}
	for _, w := range []string{whereDeviceEnv, "META_DATA_CAPTURE row PROCESS_0:ENVIRONMENT_VARIABLE"} {
		if !wheres[w] {
			t.Errorf("token not reported in %s; got %v", w, wheres)
		}
	}
	if f := find(r, KindEnv, "NSC_NOTE", false); len(f) != 1 || f[0].Where != whereDeviceEnv {
		t.Errorf("NSC_NOTE findings: %+v", f)
	}
	if f := find(r, KindWorkingDir, "PWD", false); len(f) != 1 {
		t.Errorf("PWD findings: %+v", f)
	}
	if f := find(r, KindSecret, "SECRET_KEY", false); len(f) != 1 || f[0].Where != "StringIds row 900002 (environment block no table refers to)" {
		t.Errorf("SECRET_KEY findings: %+v", f)
	}
	if f := find(r, KindEnv, "USER", false); len(f) != 1 {
		t.Errorf("USER findings: %+v", f)
	}
	if f := find(r, KindCommand, "", false); len(f) != 1 || !strings.HasPrefix(f[0].Where, "META_DATA_CAPTURE row PROCESS_1:COMMAND") {
		t.Errorf("command-line URL findings: %+v", f)
	}
	if f := find(r, KindProcess, otherName, false); len(f) != 1 || f[0].Where != "PROCESSES pid 4242" {
		t.Errorf("process findings: %+v", f)
	}
	if n := r.Count(KindProcess); n != 1 {
		t.Errorf("%d process findings, want 1 (nsys's own and the program are not findings)", n)
	}
	stale := find(r, KindSecret, "STALE_API_TOKEN", true)
	if len(stale) != 1 || !strings.Contains(stale[0].Where, "found in unused pages of the file") ||
		!strings.HasPrefix(stale[0].Where, "raw bytes at offset ") {
		t.Errorf("stale token findings: %+v", stale)
	}
	if f := find(r, KindSecret, "STALE_API_TOKEN", false); len(f) != 0 {
		t.Errorf("stale token reported as live: %+v", f)
	}
	if r.UnusedBytes == 0 {
		t.Error("UnusedBytes = 0")
	}

	diags := r.Diagnostics()
	if len(diags) == 0 {
		t.Fatal("no diagnostics")
	}
	var all strings.Builder
	for _, d := range diags {
		if d.Code() != "capture-exposes" || d.Level != diag.Warning {
			t.Errorf("diagnostic %+v", d)
		}
		all.WriteString(detailText(d) + "\n")
	}
	msg := all.String()
	for _, secret := range []string{fakeToken, otherKey, urlPass, staleToken, "hello colleague", "/home/alice/course"} {
		if strings.Contains(msg, secret) {
			t.Errorf("diagnostics show %q in full:\n%s", secret, msg)
		}
	}
	for _, want := range []string{"NSC_FAKE_TOKEN …(19 chars)", "SECRET_KEY", "NSC_NOTE", otherName, "pid 4242",
		"found in unused pages of the file", "STALE_API_TOKEN", "TARGET_INFO_SYSTEM_ENV row DeviceEnvironment"} {
		if !strings.Contains(msg, want) {
			t.Errorf("diagnostics do not mention %q:\n%s", want, msg)
		}
	}
	for _, f := range r.Findings {
		for _, secret := range []string{fakeToken, otherKey, urlPass, staleToken} {
			if strings.Contains(f.Masked, secret) || strings.Contains(f.Where, secret) || strings.Contains(f.Name, secret) {
				t.Errorf("finding shows a secret: %+v", f)
			}
		}
	}
}

func TestScrubFixture(t *testing.T) {
	dir := t.TempDir()
	in := exposedFixture(t, dir)
	before := hashFile(t, in)
	out := filepath.Join(dir, "shared.sqlite")
	rep, err := Scrub(in, out, ScrubOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if hashFile(t, in) != before {
		t.Fatal("Scrub changed its input")
	}
	if rep.Clean() {
		t.Fatal("Scrub's report of the input is empty")
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{fakeToken, otherKey, urlPass, staleToken, "hello colleague", "/home/alice", otherName} {
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("scrubbed file still holds %q", secret)
		}
	}
	after, err := ScanPath(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	if !after.Clean() {
		t.Errorf("scrubbed copy has findings: %+v", after.Findings)
	}
	db, err := sql.Open("sqlite3", nsysdb.ReadOnlyURI(out))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ok, env string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("integrity_check: %q %v", ok, err)
	}
	if err := db.QueryRow(`SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'DeviceEnvironment'`).Scan(&env); err != nil {
		t.Fatal(err)
	}
	// Names stay, values outside the allowlist go; allowlisted ones stay whole.
	for _, want := range []string{"NSC_FAKE_TOKEN=" + Redacted, "NSC_NOTE=" + Redacted, "PATH=/tmp/nsys-layout/bin", "CUDA_HOME=/usr/local/cuda"} {
		if !strings.Contains(env, want) {
			t.Errorf("DeviceEnvironment %q lacks %q", env, want)
		}
	}
	var procs int
	if err := db.QueryRow(`SELECT count(*) FROM PROCESSES WHERE pid = ?`, otherPID).Scan(&procs); err != nil || procs != 0 {
		t.Errorf("other process rows left: %d %v", procs, err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM ThreadNames WHERE (globalTid >> 24) & 16777215 = ?`, otherPID).Scan(&procs); err != nil || procs != 0 {
		t.Errorf("other process threads left: %d %v", procs, err)
	}

	// The measurements survive: the scrubbed copy loads like the original.
	c1, err := capture.LoadSQLite(in, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c2, err := capture.LoadSQLite(out, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c1.Calls) != len(c2.Calls) || c1.Memcpys.Len() != c2.Memcpys.Len() || len(c1.Kernels) != len(c2.Kernels) || len(c1.Ranges) != len(c2.Ranges) {
		t.Errorf("scrubbed copy lost records: calls %d/%d memcpys %d/%d kernels %d/%d ranges %d/%d",
			len(c1.Calls), len(c2.Calls), c1.Memcpys.Len(), c2.Memcpys.Len(), len(c1.Kernels), len(c2.Kernels), len(c1.Ranges), len(c2.Ranges))
	}

	// Refuses to overwrite without Force; with Force it replaces out.
	if _, err := Scrub(in, out, ScrubOptions{}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second Scrub without Force: %v", err)
	}
	if _, err := Scrub(in, out, ScrubOptions{Force: true, DropNames: true}); err != nil {
		t.Fatalf("Scrub with Force: %v", err)
	}
	raw, _ = os.ReadFile(out)
	if bytes.Contains(raw, []byte("NSC_NOTE")) || bytes.Contains(raw, []byte(fakeToken)) {
		t.Error("DropNames kept a variable name or the token")
	}
	if hashFile(t, in) != before {
		t.Fatal("Scrub changed its input")
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestScrubRefuses(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.sqlite")
	if err := copyFile("../testdata/captures/h200-pinned/pinned.sqlite", nil, in); err != nil {
		t.Fatal(err)
	}
	before := hashFile(t, in)
	cases := []struct {
		name, in, out, want string
	}{
		{"same path", in, in, "the output is the input"},
		{"same path spelled differently", in, filepath.Join(dir, ".", "in.sqlite"), "the output is the input"},
		{"nsys-rep", "../testdata/captures/h200-pinned/pinned.nsys-rep", filepath.Join(dir, "x.sqlite"), "nsys export --type sqlite"},
		{"not sqlite", "../testdata/captures/h200-pinned/pinned.transcript.txt", filepath.Join(dir, "y.sqlite"), "not a SQLite database"},
		{"missing input", filepath.Join(dir, "nope.sqlite"), filepath.Join(dir, "z.sqlite"), "no such file"},
		{"missing folder", in, filepath.Join(dir, "no", "such", "out.sqlite"), "folder does not exist"},
		{"no output", in, "", "no output file"},
	}
	for _, c := range cases {
		_, err := Scrub(c.in, c.out, ScrubOptions{Force: true})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
		if err != nil && !inputerr.Is(err) {
			t.Errorf("%s: %T is not an InputError", c.name, err)
		}
	}
	if hashFile(t, in) != before {
		t.Fatal("a refused Scrub changed its input")
	}
	// A symlink to the input is the input.
	link := filepath.Join(dir, "link.sqlite")
	if err := os.Symlink(in, link); err == nil {
		if _, err := Scrub(in, link, ScrubOptions{Force: true}); err == nil || !strings.Contains(err.Error(), "the output is the input") {
			t.Errorf("symlink output: %v", err)
		}
	}
	// A clean capture scrubs to a clean copy.
	out := filepath.Join(dir, "clean.sqlite")
	rep, err := Scrub(in, out, ScrubOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Clean() {
		t.Errorf("clean input reported %d findings", len(rep.Findings))
	}
}

// A real capture made without nsyscheck's isolation, with planted secrets
// (see testdata/exposure/README.md).
const exposureDir = "../testdata/exposure"

func TestScanRealExposure(t *testing.T) {
	p := filepath.Join(exposureDir, "exposed.sqlite")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("committed fixture missing: %v", err)
	}
	r, err := ScanPath(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if f := find(r, KindSecret, "NSC_FAKE_TOKEN", false); len(f) == 0 {
		t.Error("NSC_FAKE_TOKEN not found")
	}
	if f := find(r, KindSecret, "SECRET_KEY", false); len(f) == 0 {
		t.Error("the second process's SECRET_KEY not found")
	}
	if r.Count(KindProcess) == 0 {
		t.Error("no other process found")
	}
	for _, d := range r.Diagnostics() {
		if strings.Contains(detailText(d), fakeToken) {
			t.Errorf("token in full in %q", detailText(d))
		}
	}
	rep := filepath.Join(exposureDir, "exposed.nsys-rep")
	if _, err := os.Stat(rep); err != nil {
		t.Fatalf("committed fixture missing: %v", err)
	}
	{
		rr, err := ScanPath(context.Background(), rep)
		if err != nil {
			t.Fatal(err)
		}
		if f := find(rr, KindSecret, "NSC_FAKE_TOKEN", false); len(f) == 0 {
			t.Error("NSC_FAKE_TOKEN not found in the .nsys-rep")
		}
	}
}

func TestScrubRealExposure(t *testing.T) {
	in := filepath.Join(exposureDir, "exposed.sqlite")
	if _, err := os.Stat(in); err != nil {
		t.Fatalf("committed fixture missing: %v", err)
	}
	before := hashFile(t, in)
	out := filepath.Join(t.TempDir(), "shared.sqlite")
	if _, err := Scrub(in, out, ScrubOptions{}); err != nil {
		t.Fatal(err)
	}
	if hashFile(t, in) != before {
		t.Fatal("Scrub changed its input")
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{fakeToken, "colleague-secret-91c3", "hunter2"} {
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("%q survives in the scrubbed file", secret)
		}
	}
	after, err := ScanPath(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	if !after.Clean() {
		t.Errorf("scrubbed copy has %d findings", len(after.Findings))
	}
}

func TestScanNsysRepRaw(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(nsysdb.NsysRepMagic + " 1.\n\x0b\x02")
	b.WriteString("PATH=/usr/bin\x00HOME=/tmp\x00LD_PRELOAD={}\x00CUDA_HOME=/usr/local/cuda\x00")
	b.WriteString("NSC_FAKE_TOKEN=" + fakeToken + "\x00NSC_NOTE=hi there\x00LANG=C.UTF-8\x00")
	b.WriteString("\x01\x02_VERSION=7\x04\x22cpuctxsw=none\x00") // compressed fragments and nsys options
	b.WriteString("\x12\x30GIT_REMOTE=https://me:" + urlPass + "@git.example.com/r.git\x00")
	p := filepath.Join(t.TempDir(), "x.nsys-rep")
	if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := ScanPath(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if r.Format != "nsys-rep" {
		t.Fatalf("format %q", r.Format)
	}
	if f := find(r, KindSecret, "NSC_FAKE_TOKEN", false); len(f) != 1 || !strings.HasPrefix(f[0].Where, "raw bytes at offset ") {
		t.Errorf("token: %+v", f)
	}
	if f := find(r, KindSecret, "GIT_REMOTE", false); len(f) != 1 {
		t.Errorf("credential URL: %+v", r.Findings)
	}
	if f := find(r, KindEnv, "NSC_NOTE", false); len(f) != 1 {
		t.Errorf("NSC_NOTE: %+v", f)
	}
	if f := find(r, KindEnv, "LANG", false); len(f) != 1 {
		t.Errorf("LANG: %+v", f)
	}
	if len(r.Findings) != 4 {
		t.Errorf("%d findings, want 4: %+v", len(r.Findings), r.Findings)
	}
	diags := r.Diagnostics()
	if len(diags) != 3 { // two credentials, one group of variables
		t.Errorf("%d diagnostics: %+v", len(diags), diags)
	}
	for _, d := range diags {
		if strings.Contains(detailText(d), fakeToken) || strings.Contains(detailText(d), urlPass) || strings.Contains(detailText(d), "hi there") {
			t.Errorf("value in full: %s", detailText(d))
		}
	}
	if _, err := Scrub(p, filepath.Join(t.TempDir(), "x.sqlite"), ScrubOptions{}); err == nil ||
		!strings.Contains(err.Error(), "cannot be rewritten") || !strings.Contains(err.Error(), "nsys export --type sqlite") {
		t.Errorf("Scrub of a .nsys-rep: %v", err)
	}
}

// Paths with spaces, quotes, an apostrophe, '#', '?' and '%' reach SQLite
// intact, for Scan and for Scrub.
func TestScanAndScrubOddPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), `it's a "course" #1?`)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "100% pinned.sqlite")
	if err := copyFile("../testdata/captures/h200-pinned/pinned.sqlite", nil, in); err != nil {
		t.Fatal(err)
	}
	r, err := ScanPath(context.Background(), in)
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	if !r.Clean() {
		t.Errorf("clean capture gave %d findings", len(r.Findings))
	}
	out := filepath.Join(dir, "shared 'copy'.sqlite")
	if _, err := Scrub(in, out, ScrubOptions{}); err != nil {
		t.Fatalf("Scrub: %v", err)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}
}

// detailText is every string a diagnostic's words are made of: the
// exposure's file and place, and each finding's label, masked value and
// place.
func detailText(d diag.Diagnostic) string {
	e, ok := d.Detail.(Exposure)
	if !ok {
		return fmt.Sprintf("%v", d.Detail)
	}
	parts := []string{e.File, e.Where}
	for _, f := range e.Findings {
		parts = append(parts, string(f.Kind), f.Label(), f.Masked, f.Where)
	}
	return strings.Join(parts, " ")
}

// TestScanFailsClosed: a NULL in a nullable column (globalTid) does not
// make the scan fail; a table the scan cannot read fails it, and the rest
// of the scan still runs and reports the key planted elsewhere; a
// cancelled context stops it.
func TestScanFailsClosed(t *testing.T) {
	shipped := filepath.Join("..", "testdata", "captures", "h200-pinned", "pinned.sqlite")
	const key = "AKIAIOSFODNN7EXAMPLE"
	plant := `UPDATE StringIds SET value = value || ' ` + key + `' WHERE id = (SELECT min(id) FROM StringIds)`
	hasKey := func(r *Report) bool {
		for _, f := range r.Findings {
			if f.Kind == KindSecret && strings.HasPrefix(f.Masked, "AKI") {
				return true
			}
		}
		return false
	}
	null := fixture.SQLite(t, shipped, plant, `UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = NULL WHERE rowid = 1`,
		`UPDATE ThreadNames SET globalTid = NULL WHERE rowid = 1`)
	r, err := ScanPath(context.Background(), null)
	if err != nil || !hasKey(r) {
		t.Errorf("a NULL globalTid: %v, key found %v", err, r != nil && hasKey(r))
	}
	damaged := fixture.SQLite(t, shipped, plant, `UPDATE PROCESSES SET pid = 'twenty-two'`)
	r, err = ScanPath(context.Background(), damaged)
	if err == nil || !strings.Contains(err.Error(), "table PROCESSES") || r == nil || !hasKey(r) {
		t.Errorf("an unreadable PROCESSES table: %v, report %v", err, r)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ScanPath(ctx, shipped); err == nil {
		t.Error("a cancelled scan ran to the end")
	}
}

// TestScanStringsUnsorted: the secret scan reads each text column in the
// table's order, with no temporary b-tree (SELECT DISTINCT sorted all of
// StringIds first: 30 s of a 44 s verify for 1.5M strings), and still finds
// a credential in a column that repeats it, beside values it saw lately.
func TestScanStringsUnsorted(t *testing.T) {
	shipped := filepath.Join("..", "testdata", "captures", "h200-pinned", "pinned.sqlite")
	const key = "AKIAIOSFODNN7EXAMPLE"
	p := fixture.SQLite(t, shipped,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 5000)
			INSERT INTO StringIds SELECT 900000 + i, CASE i % 3 WHEN 0 THEN 'fwd' WHEN 1 THEN 'bwd' ELSE 'step ' || (i % 7) END FROM n`,
		`UPDATE StringIds SET value = 'note ' || id || ' `+key+`' WHERE id IN (904999, 905000)`)
	db, err := sql.Open("sqlite3", nsysdb.ReadOnlyURI(p))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, tc := range [][2]string{{"StringIds", "value"}, {"NVTX_EVENTS", "text"}, {"TARGET_INFO_SYSTEM_ENV", "value"}} {
		rows, err := db.Query(`EXPLAIN QUERY PLAN ` + textQuery(tc[0], tc[1]))
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(detail, "TEMP B-TREE") {
				t.Errorf("%s.%s: the scan's query sorts the column first: %s", tc[0], tc[1], detail)
			}
		}
		rows.Close()
	}
	r, err := ScanPath(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, f := range r.Findings {
		if f.Kind == KindSecret && strings.HasPrefix(f.Masked, "AKI") {
			found = append(found, f.Where)
		}
	}
	if len(found) != 1 || found[0] != "table StringIds column value" {
		t.Errorf("the key planted twice among 5000 repeated strings: found at %q, want once in table StringIds column value", found)
	}
	seen := recentStrings{}
	for i := range recentMax + 10 {
		if seen.again([]byte(fmt.Sprint("v", i))) {
			t.Fatalf("value %d taken as seen before", i)
		}
	}
	if len(seen) > recentMax {
		t.Errorf("the recent strings grew to %d, past %d", len(seen), recentMax)
	}
	if long := []byte(strings.Repeat("x", recentLen+1)); seen.again(long) || seen.again(long) {
		t.Error("a long string taken as seen: only short strings are remembered")
	}
}

// TestScrubAssignmentInString plants "export TOKEN=..." as a string of the
// real capture's StringIds: its record's next field follows the value in
// the file's bytes, with nothing between that ends it. The scan reports
// it once (the string, not also its raw bytes with the glue), and the
// scrubbed copy, whose string reads "export TOKEN=[redacted]" before that
// glue, is written and scans clean.
func TestScrubAssignmentInString(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.sqlite")
	if err := copyFile("../testdata/captures/h200-pinned/pinned.sqlite", nil, in); err != nil {
		t.Fatal(err)
	}
	const secret = "abcdefsecretvalue"
	db, err := sql.Open("sqlite3", nsysdb.URI(in, "mode=rw"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO StringIds (id, value) VALUES (999999, ?)`, "export TOKEN="+secret); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := ScanPath(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if got := find(rep, KindSecret, "TOKEN", false); len(got) != 1 || got[0].InRawBytes() {
		t.Errorf("scan of the planted string: %+v, want one finding in StringIds", got)
	}
	out := filepath.Join(dir, "shared.sqlite")
	if _, err := Scrub(in, out, ScrubOptions{}); err != nil {
		t.Fatalf("Scrub: %v", err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(secret)) {
		t.Errorf("%q survives in the scrubbed file", secret)
	}
	after, err := ScanPath(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	if !after.Clean() {
		t.Errorf("scrubbed copy has findings: %+v", after.Findings)
	}
}
