package privacy

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/bigcapture"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

// BenchmarkScan1M scans a capture with 1M added CUDA API rows (about
// 42 MiB), the way verify does before it loads the capture. Run with
// -benchmem; peak RSS of a whole verify is measured by internal/perfbench.
func BenchmarkScan1M(b *testing.B) {
	res, err := bigcapture.Generate(bigcapture.Config{Source: filepath.Join("..", bigcapture.DefaultSource),
		OutDir: b.TempDir(), Runtime: 1_000_000, Seed: 1, NoCSV: true})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(res.SQLiteBytes)
	b.ResetTimer()
	for b.Loop() {
		r, err := ScanPath(context.Background(), res.SQLite)
		if err != nil {
			b.Fatal(err)
		}
		if !r.Clean() {
			b.Fatalf("%d findings in a clean capture", len(r.Findings))
		}
	}
}

// BenchmarkFindSecretsRepeats runs the detector over 1 MiB strings that
// repeat one piece of a credential format: every detector reads each byte
// a bounded number of times, so each takes time in proportion to the
// string's length (a pass that rescanned from every separator or prefix
// took minutes here).
func BenchmarkFindSecretsRepeats(b *testing.B) {
	for _, unit := range []string{"token=", "token=$", "token='", "password=\"", "password: x ", "a:",
		"-----BEGIN RSA PRIVATE KEY-----", "eyJ.", "-eyJ", "Bearer ", "AKIAIOSFODNN7EXAMPLE ", "xox-", "x"} {
		s := strings.Repeat(unit, (1<<20)/len(unit))
		b.Run(strings.NewReplacer(" ", "_", "\"", "dq", "'", "sq").Replace(unit), func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				FindSecrets(s)
			}
		})
	}
}

// deletedPasswordsFixture copies a clean capture and adds, then deletes,
// rows of dense password text: each row holds perRow distinct
// db_password=..., --password ... and "token": "..." values, so that the
// file's unused pages hold rows*perRow*3 stale credentials.
func deletedPasswordsFixture(tb testing.TB, dir string, rows, perRow int) string {
	tb.Helper()
	dst := filepath.Join(dir, "deleted.sqlite")
	if err := copyFile(filepath.Join("..", bigcapture.DefaultSource), nil, dst); err != nil {
		tb.Fatal(err)
	}
	db, err := sql.Open("sqlite3", nsysdb.URI(dst, "mode=rw"))
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := tx.Exec(`CREATE TABLE notes (id INTEGER PRIMARY KEY, v TEXT)`); err != nil {
		tb.Fatal(err)
	}
	var b strings.Builder
	for r := 0; r < rows; r++ {
		b.Reset()
		for k := 0; k < perRow; k++ {
			n := r*perRow + k
			fmt.Fprintf(&b, "db_password=Pw%08x --password Run%08x {\"token\": \"Tk%08x\"} ", n, n, n)
		}
		if _, err := tx.Exec(`INSERT INTO notes (v) VALUES (?)`, b.String()); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
	// Deleted in a transaction of its own: pages a transaction both
	// writes and frees may never reach the file.
	if _, err := db.Exec(`DELETE FROM notes`); err != nil {
		tb.Fatal(err)
	}
	return dst
}

// BenchmarkScanDeletedPasswords scans a capture whose unused pages hold
// 20,000 deleted rows of dense password text (about 600,000 stale values),
// the unused-space text pass's worst case.
func BenchmarkScanDeletedPasswords(b *testing.B) {
	path := deletedPasswordsFixture(b, b.TempDir(), 20_000, 10)
	if out := os.Getenv("NSYSCHECK_BENCH_KEEP"); out != "" {
		if err := copyFile(path, nil, out); err != nil {
			b.Fatal(err)
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ResetTimer()
	for b.Loop() {
		r, err := ScanPath(context.Background(), path)
		if err != nil {
			b.Fatal(err)
		}
		if r.Clean() {
			b.Fatal("no finding in the deleted rows")
		}
	}
}

// BenchmarkScrubStaleValues scrubs a capture whose unused pages hold about
// 10,000 distinct stale credential values (deleted rows of password text):
// every text column of every table is searched for all of them.
func BenchmarkScrubStaleValues(b *testing.B) {
	dir := b.TempDir()
	in := deletedPasswordsFixture(b, dir, 340, 10)
	if out := os.Getenv("NSYSCHECK_BENCH_KEEP"); out != "" {
		if err := copyFile(in, nil, out); err != nil {
			b.Fatal(err)
		}
	}
	out := filepath.Join(dir, "shared.sqlite")
	b.ResetTimer()
	for b.Loop() {
		rep, err := Scrub(in, out, ScrubOptions{Force: true})
		if err != nil {
			b.Fatal(err)
		}
		if len(rep.Findings) < 9000 {
			b.Fatalf("%d findings, want about 10,000", len(rep.Findings))
		}
	}
}

// BenchmarkScanBeginLines scans a capture whose log table holds 50,000
// distinct strings each ending with a private key's BEGIN line: each is
// searched for secrets once, for the report and for the key after it.
func BenchmarkScanBeginLines(b *testing.B) {
	in := filepath.Join(b.TempDir(), "begins.sqlite")
	if err := copyFile(filepath.Join("..", bigcapture.DefaultSource), nil, in); err != nil {
		b.Fatal(err)
	}
	db, err := sql.Open("sqlite3", nsysdb.URI(in, "mode=rw"))
	if err != nil {
		b.Fatal(err)
	}
	for _, q := range []string{`CREATE TABLE log (id INTEGER PRIMARY KEY, line TEXT)`,
		`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i < 49999)
		INSERT INTO log (line) SELECT 'loading key number ' || i || ' of the run, from the vault: -----BEGIN RSA PRIVATE KEY-----' FROM n`} {
		if _, err := db.Exec(q); err != nil {
			b.Fatal(err)
		}
	}
	db.Close()
	b.ResetTimer()
	for b.Loop() {
		if _, err := ScanPath(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
}
