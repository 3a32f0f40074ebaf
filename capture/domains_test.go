package capture

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/fixture"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

// A library's NVTX range named as the program's ("step", in a domain of
// its own) is another range, named with its domain: once it was more
// instances of the program's, halving the audit's median step. The
// program's own, in the default domain, keep their names.
func TestRangesOfOneNameInTwoDomains(t *testing.T) {
	src := "../testdata/captures/train-pageable/train-pageable.sqlite"
	p := filepath.Join(t.TempDir(), "train.sqlite")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", nsysdb.URI(p, "mode=rw"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (0, 0, 75, 'lib', (SELECT globalTid FROM NVTX_EVENTS LIMIT 1), 7)`,
		`INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) SELECT start, start + 1000, 59, 'step', globalTid, 7 FROM NVTX_EVENTS WHERE text = 'step' AND eventType = 59`,
		`INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) SELECT start, start + 1000, 59, 'epoch', globalTid, 9 FROM NVTX_EVENTS WHERE text = 'epoch' AND eventType = 59`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	c, err := LoadSQLite(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]int{}
	for _, r := range c.Ranges {
		names[r.Name]++
	}
	want := map[string]int{"step": 67, "step (NVTX domain lib)": 67, "epoch": 1, "epoch (NVTX domain 9)": 1}
	for n, k := range want {
		if names[n] != k {
			t.Errorf("%d ranges named %q, want %d (all: %v)", names[n], n, k, names)
		}
	}
}

// The same in a folder of CSV reports, where nvtx_sum lists each domain's
// ranges of the name apart.
func TestCSVRangesOfOneNameInTwoDomains(t *testing.T) {
	src := "../testdata/captures/train-pageable/"
	dir := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".csv") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		text := fixture.LibrarySteps(e.Name(), string(b))
		if err := os.WriteFile(filepath.Join(dir, e.Name()), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]int{}
	for _, r := range c.Ranges {
		names[r.Name]++
	}
	if names["step"] != 67 || names["step (NVTX domain lib)"] != 67 {
		t.Errorf("ranges by name: %v, want 67 step and 67 step (NVTX domain lib)", names)
	}
}
