package privacy

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

func TestFindSecrets(t *testing.T) {
	gh := "ghp_" + strings.Repeat("a1B2", 6)
	aws := "AKIA" + strings.Repeat("Q7", 8)
	cases := []struct {
		in   string
		want []string // the values found, in order
	}{
		{"backup.sh --password=Backup-Pass-771", []string{"Backup-Pass-771"}},
		{"./pinned --json out.json --password Run-Pass-552", []string{"Run-Pass-552"}},
		{"./pinned --json out.json --password=Run-Pass-552 --other x", []string{"Run-Pass-552"}},
		{"tool -token 'tok value'", []string{"'tok"}},
		{`tool --api-key="k3y-v4lue"`, []string{"k3y-v4lue"}},
		{"env GITHUB_TOKEN=abc123 ./x", []string{"abc123"}},
		{"epoch 3 " + gh + " done", []string{gh}},
		{"worker " + aws, []string{aws}},
		{"NAME\x00SECRET_KEY=s3cr3t\x00PATH=/bin", []string{"s3cr3t"}},
		{"sync --db postgres://app:pw123@db/x", []string{"postgres://app:pw123@db"}},
		{"tool --password --verbose", nil},
		{"tool --password=" + Redacted, nil},
		{"NSC_FAKE_TOKEN=nsc…(19 chars)", nil},
		{"./pinned --json out.json", nil},
		{"async-pinned", nil},
		{"TIKTOKEN_CACHE_DIR=/tmp/x", nil},
	}
	for _, c := range cases {
		got := FindSecrets(c.in)
		var vals []string
		for _, s := range got {
			vals = append(vals, s.Value)
			if c.in[s.Offset:s.Offset+len(s.Value)] != s.Value {
				t.Errorf("FindSecrets(%q): offset %d does not point at %q", c.in, s.Offset, s.Value)
			}
		}
		if strings.Join(vals, "|") != strings.Join(c.want, "|") {
			t.Errorf("FindSecrets(%q) = %q, want %q", c.in, vals, c.want)
		}
		masked := MaskSecrets(c.in)
		for _, v := range c.want {
			if strings.Contains(masked, strings.Trim(v, "'")) && len(v) > 4 {
				t.Errorf("MaskSecrets(%q) = %q still holds %q", c.in, masked, v)
			}
		}
		if len(c.want) == 0 && masked != c.in {
			t.Errorf("MaskSecrets(%q) = %q changed a string with no secret", c.in, masked)
		}
		if MaskSecrets(masked) != masked {
			t.Errorf("MaskSecrets is not idempotent on %q", masked)
		}
	}
}

// The secrets planted in names by namesFixture.
var nameSecrets = []string{"Backup-Pass-771", "Run-Pass-552", "ghp_" + strings.Repeat("n4M3", 6), "AKIA" + strings.Repeat("T8", 8), "xoxb-" + strings.Repeat("s1", 10)}

// namesFixture copies a clean capture and plants credentials where names
// live: another process's command line, the profiled program's own command
// line (PROCESSES and META_DATA_CAPTURE, with the password after other
// arguments), an NVTX range's text, a thread name and a bare StringIds value.
func namesFixture(t *testing.T, dir string) string {
	t.Helper()
	dst := filepath.Join(dir, "names.sqlite")
	if err := copyFile("../testdata/captures/h200-pinned/pinned.sqlite", dst); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", nsysdb.URI(dst, "mode=rw"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`INSERT INTO PROCESSES (globalPid, pid, name) VALUES (4343 << 24, 4343, 'backup.sh --user bob --password=` + nameSecrets[0] + `')`,
		`UPDATE PROCESSES SET name = './pinned --json out.json --password ` + nameSecrets[1] + `' WHERE pid = 22`,
		`INSERT INTO META_DATA_CAPTURE (name, value) VALUES ('PROCESS_0:COMMAND', './pinned --json out.json --password ` + nameSecrets[1] + `')`,
		`UPDATE NVTX_EVENTS SET text = 'epoch ` + nameSecrets[2] + `' WHERE rowid = (SELECT min(rowid) FROM NVTX_EVENTS)`,
		`UPDATE StringIds SET value = value || ' ` + nameSecrets[3] + `' WHERE id = (SELECT nameId FROM ThreadNames WHERE (globalTid >> 24) & 16777215 = 22 LIMIT 1)`,
		`INSERT INTO StringIds (id, value) VALUES (900100, 'note ` + nameSecrets[4] + `')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return dst
}

// TestSecretsInNames: Scan finds every planted credential, its messages
// show none of them, and Scrub's copy holds none (its own final check
// runs the same detector).
func TestSecretsInNames(t *testing.T) {
	dir := t.TempDir()
	in := namesFixture(t, dir)
	rep, err := Scan(in)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]string{}
	for _, f := range rep.Findings {
		found[f.value] = f.Where
	}
	for _, s := range nameSecrets {
		if _, ok := found[s]; !ok {
			t.Errorf("Scan missed %q; found %v", s, found)
		}
	}
	var msgs strings.Builder
	for _, d := range rep.Diagnostics() {
		msgs.WriteString(detailText(d) + "\n")
	}
	for _, f := range rep.Findings {
		msgs.WriteString(f.Name + " " + f.Where + " " + f.Masked + "\n")
	}
	for _, s := range nameSecrets {
		if strings.Contains(msgs.String(), s) {
			t.Errorf("a message shows %q:\n%s", s, msgs.String())
		}
	}
	if !strings.Contains(msgs.String(), "backup.sh --user bob --password=") {
		t.Errorf("the other process is not named (masked):\n%s", msgs.String())
	}

	out := filepath.Join(dir, "shared.sqlite")
	if _, err := Scrub(in, out, ScrubOptions{}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range nameSecrets {
		if bytes.Contains(raw, []byte(s)) {
			t.Errorf("the scrubbed copy holds %q", s)
		}
	}
	// The check Scrub ends with would have refused a copy that kept one.
	after, err := Scan(out)
	if err != nil {
		t.Fatal(err)
	}
	if !after.Clean() {
		t.Errorf("scrubbed copy has findings: %+v", after.Findings)
	}
}

// TestSecretInWAL: a credential committed to a WAL-mode export but still in
// its -wal is found by Scan and absent from Scrub's copy, which is made from
// the committed state; the input and its -wal are left as they were.
func TestSecretInWAL(t *testing.T) {
	scratch, dir := t.TempDir(), t.TempDir()
	src := filepath.Join(scratch, "wal.sqlite")
	if err := copyFile("../testdata/captures/h200-pinned/pinned.sqlite", src); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", nsysdb.URI(src, "mode=rw"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	for _, q := range []string{`PRAGMA journal_mode=WAL`, `PRAGMA wal_autocheckpoint=0`,
		`INSERT INTO PROCESSES (globalPid, pid, name) VALUES (4343 << 24, 4343, 'backup.sh --password=` + nameSecrets[0] + `')`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
	// Copy the file and its log while the writer is open (as after a crash).
	in := filepath.Join(dir, "wal.sqlite")
	for _, s := range []string{"", "-wal"} {
		if err := copyFile(src+s, in+s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if raw, _ := os.ReadFile(in); bytes.Contains(raw, []byte(nameSecrets[0])) {
		t.Fatal("the secret reached the main file; the case needs it in the -wal only")
	}
	before := hashFile(t, in+"-wal")
	rep, err := Scan(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(rep.Notes, " "), "wal.sqlite-wal") {
		t.Errorf("no note about the -wal: %q", rep.Notes)
	}
	hit := false
	for _, f := range rep.Findings {
		hit = hit || f.value == nameSecrets[0]
	}
	if !hit {
		t.Errorf("Scan missed the secret committed to the -wal")
	}
	out := filepath.Join(t.TempDir(), "shared.sqlite")
	if _, err := Scrub(in, out, ScrubOptions{}); err != nil {
		t.Fatal(err)
	}
	if raw, _ := os.ReadFile(out); bytes.Contains(raw, []byte(nameSecrets[0])) {
		t.Error("the scrubbed copy holds the secret")
	}
	if hashFile(t, in+"-wal") != before {
		t.Error("the input's -wal changed")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the input's folder holds %v, want the file and its -wal", names)
	}
}

// TestRawTokens: a bare token of a well-known format is found in the raw
// bytes too: in a .nsys-rep (searched as raw bytes only) and in the unused
// pages of an export, where a deleted row left it.
func TestRawTokens(t *testing.T) {
	dir := t.TempDir()
	tok := "ghp_" + strings.Repeat("R4w", 8)
	rep := filepath.Join(dir, "x.nsys-rep")
	data := append([]byte("NVIDIA Tegra Profiler Report\x00\x01"), bytes.Repeat([]byte{0x9c, 0x00}, 5000)...)
	data = append(data, []byte("\x00nvtx epoch "+tok+"\x00")...)
	data = append(data, bytes.Repeat([]byte{0x7f}, 3000)...)
	if err := os.WriteFile(rep, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Scan(rep)
	if err != nil {
		t.Fatal(err)
	}
	if !hasValue(r, tok, false) {
		t.Errorf("the token in the .nsys-rep was missed: %+v", r.Findings)
	}

	p := filepath.Join(dir, "x.sqlite")
	if err := copyFile("../testdata/captures/h200-pinned/pinned.sqlite", p); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", nsysdb.URI(p, "mode=rw"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	for _, q := range []string{`PRAGMA secure_delete = OFF`,
		`INSERT INTO StringIds (id, value) VALUES (900200, 'note ` + tok + ` ` + strings.Repeat("pad ", 1500) + `')`,
		`DELETE FROM StringIds WHERE id = 900200`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
	db.Close()
	if r, err = Scan(p); err != nil {
		t.Fatal(err)
	}
	if !hasValue(r, tok, true) {
		t.Errorf("the token in unused pages was missed: %+v", r.Findings)
	}
}

// hasValue reports whether r holds a secret finding of value, in unused
// space or not as unused says.
func hasValue(r *Report, value string, unused bool) bool {
	for _, f := range r.Findings {
		if f.value == value && f.Kind == KindSecret && f.Unused == unused {
			return true
		}
	}
	return false
}
