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

// A scrub's output that is a link to nothing is named as such, not as a
// file that exists, and refused with --force too.
func TestExistsErrorDanglingLink(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "shared.sqlite")
	if err := os.Symlink(filepath.Join(dir, "gone.sqlite"), link); err != nil {
		t.Fatal(err)
	}
	err := existsError(link)
	if !strings.Contains(err.Error(), "the output is a link to "+filepath.Join(dir, "gone.sqlite")+", which does not exist") ||
		!strings.Contains(err.Error(), "scrub neither writes through a link nor replaces one, even with --force") {
		t.Errorf("a link to nothing: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "file.sqlite"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := existsError(filepath.Join(dir, "file.sqlite")); !strings.Contains(err.Error(), "the output file already exists") {
		t.Errorf("a file: %v", err)
	}
}

// A credential in a table's SQL outside its names (a DEFAULT clause, a
// comment) is redacted in that SQL: the table keeps its columns and its
// default works; once, nothing was written, with a message blaming the
// capture's nsys version.
func TestScrubCredentialInTableSQL(t *testing.T) {
	const token = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
	dir := t.TempDir()
	in := filepath.Join(dir, "in.sqlite")
	if err := copyFile("../testdata/captures/h200-pinned/pinned.sqlite", nil, in); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", nsysdb.URI(in, "mode=rw"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE NOTES (id INTEGER, cmd TEXT DEFAULT 'export GITHUB_TOKEN=` + token + `')`,
		"CREATE TABLE MORE (id INTEGER -- " + token + "\n)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "shared.sqlite")
	if _, err := Scrub(in, out, ScrubOptions{}); err != nil {
		t.Fatalf("Scrub: %v", err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(token[4:])) {
		t.Error("the token survives in the scrubbed file")
	}
	db, err = sql.Open("sqlite3", nsysdb.URI(out, "mode=rw"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var cmd string
	if _, err := db.Exec(`INSERT INTO NOTES (id) VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT cmd FROM NOTES`).Scan(&cmd); err != nil || cmd != "export GITHUB_TOKEN="+Redacted {
		t.Errorf("the default after scrubbing: %q %v", cmd, err)
	}
}

// A CSV report saved as UTF-16 is named so, as every reader of the CSV
// reports names it, not as a CSV that cannot be read at row 1.
func TestScanCSVUTF16(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pinned_cuda_api_sum.csv")
	if err := os.WriteFile(p, []byte("\xff\xfeT\x00i\x00m\x00e\x00\n\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ScanCSV(t.Context(), p)
	if err == nil || !strings.Contains(err.Error(), "the file is UTF-16LE text (with a byte-order mark), not UTF-8") ||
		!strings.Contains(err.Error(), "iconv -f UTF-16LE") || strings.Contains(err.Error(), "row 1") {
		t.Errorf("a UTF-16 report: %v", err)
	}
}

// A folder given to scrub is refused naming the export in it to give, not
// with advice to copy "the data into a regular file".
func TestScrubFolder(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pinned_cuda_api_sum.csv"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Scrub(dir, filepath.Join(t.TempDir(), "out.sqlite"), ScrubOptions{})
	if err == nil || !strings.Contains(err.Error(), "a folder: scrub writes a shareable copy of one SQLite export, and CSV reports cannot be scrubbed") || strings.Contains(err.Error(), "regular file") {
		t.Errorf("a folder of CSV reports: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pinned.sqlite"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Scrub(dir, filepath.Join(t.TempDir(), "out.sqlite"), ScrubOptions{}); err == nil || !strings.Contains(err.Error(), "give the SQLite export in it, "+filepath.Join(dir, "pinned.sqlite")) {
		t.Errorf("a run folder: %v", err)
	}
}

// A scrub's output in a folder that is a link to nothing says so, not
// "create it first" of a name that exists.
func TestScrubOutputUnderDanglingLink(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "out")
	if err := os.Symlink(filepath.Join(dir, "gone"), link); err != nil {
		t.Fatal(err)
	}
	_, err := Scrub("../testdata/captures/h200-pinned/pinned.sqlite", filepath.Join(link, "shared.sqlite"), ScrubOptions{})
	if err == nil || !strings.Contains(err.Error(), "the output folder is a link to "+filepath.Join(dir, "gone")+", which does not exist") {
		t.Errorf("an output under a link to nothing: %v", err)
	}
}

// Scrub --force onto a link to nothing refuses it and leaves the link.
func TestScrubForceDanglingLink(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "shared.sqlite")
	if err := os.Symlink(filepath.Join(dir, "gone.sqlite"), link); err != nil {
		t.Fatal(err)
	}
	_, err := Scrub("../testdata/captures/h200-pinned/pinned.sqlite", link, ScrubOptions{Force: true})
	if err == nil || !strings.Contains(err.Error(), "which does not exist; scrub neither writes through a link nor replaces one") {
		t.Errorf("--force onto a link to nothing: %v", err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
}
