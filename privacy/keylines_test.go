package privacy

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

// A private key stored a line a string: Scan finds its BEGIN line and
// says how many strings after it are the key's; Scrub's copy holds none of
// its lines. Words after a lone BEGIN line are kept, as is a base64 line
// after a BEGIN line that a body follows in its own string.
func TestKeyLinesInRows(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "lines.sqlite")
	if err := copyFile("../testdata/captures/h200-pinned/pinned.sqlite", nil, in); err != nil {
		t.Fatal(err)
	}
	body := []string{"MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun", "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK", "Proc-Type: 4,ENCRYPTED", "pRq2"}
	// A key whose END line is missing: its lines of one width are its.
	cut := []string{"MHcCAQEEIBYr8n2aTq5rE0uQ9Y3bdCq0aL2Wm1sVnXo7GkJfPzQxoAoGCCqGSM49", "AwEHoUQDQgAEm4YfS0qkXo3pJ8vHq3zJ2cT6hWnB1sLr5eD9uKaR7fMxNvQ0Yc2Z"}
	kept := []string{"warmupPhaseNumberOne", "stepwise", "QUJDREVGR0hJSktMTU5PUFFSU1RVVldY"}
	db, err := sql.Open("sqlite3", nsysdb.URI(in, "mode=rw"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE log (id INTEGER PRIMARY KEY, line TEXT)`,
		`INSERT INTO log (line) VALUES ('loading key'), ('-----BEGIN RSA PRIVATE KEY-----'), ('` + strings.Join(body, "'), ('") + `'), ('-----END RSA PRIVATE KEY-----'), ('done')`,
		// A lone BEGIN line, then words: no key follows.
		`INSERT INTO log (line) VALUES ('-----BEGIN PRIVATE KEY-----'), ('` + kept[0] + `'), ('` + kept[1] + `'), ('step')`,
		`INSERT INTO log (line) VALUES ('-----BEGIN EC PRIVATE KEY-----'), ('` + cut[0] + `'), ('` + cut[1] + `'), ('tail')`,
		// A key whole in one string: the line after it is not the key's.
		`INSERT INTO log (line) VALUES ('-----BEGIN PRIVATE KEY-----\nMIIBVQIBADANBgkqhkiG9w0BAQEFAASCAT8wggE7AgEAAkEA\n-----END PRIVATE KEY-----'), ('` + kept[2] + `')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	rep, err := ScanPath(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	var wheres []string
	for _, f := range rep.Findings {
		wheres = append(wheres, f.Where)
	}
	if !strings.Contains(strings.Join(wheres, "|"), "table log column line and 4 strings after it (the key's lines)") {
		t.Errorf("the key's lines not told: %q", wheres)
	}
	out := scrubHoldsNone(t, in, filepath.Join(dir, "shared.sqlite"), append(append(body[:2:2], "Proc-Type: 4,ENCRYPTED"), cut...))
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append(kept, "loading key", "done", "tail") {
		if !strings.Contains(string(raw), s) {
			t.Errorf("the scrubbed copy lost %q", s)
		}
	}
}

// TestKeyLinesRepeatedBegin: a BEGIN line seen just before in the column
// (a log that loads the same key twice) is not searched again for the
// report, yet its key's lines are still found from the secrets of that
// string, and scrub removes both copies of them.
func TestKeyLinesRepeatedBegin(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "twice.sqlite")
	if err := copyFile("../testdata/captures/h200-pinned/pinned.sqlite", nil, in); err != nil {
		t.Fatal(err)
	}
	body := []string{"MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun", "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK"}
	other := []string{"QyNTUxOQAAACBvUHJpdmF0ZUtleUJvZHlGb3JUZXN0aW5nT25seQAAAJgAAAAAAA", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtz"}
	db, err := sql.Open("sqlite3", nsysdb.URI(in, "mode=rw"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE log (id INTEGER PRIMARY KEY, line TEXT)`,
		`INSERT INTO log (line) VALUES ('-----BEGIN RSA PRIVATE KEY-----'), ('` + strings.Join(body, "'), ('") + `'), ('-----END RSA PRIVATE KEY-----'),
			('-----BEGIN RSA PRIVATE KEY-----'), ('` + strings.Join(other, "'), ('") + `'), ('-----END RSA PRIVATE KEY-----')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	rep, err := ScanPath(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range rep.Findings {
		n += len(f.lines)
	}
	if n != 4 {
		t.Errorf("%d key lines found, want both keys' 2: %+v", n, rep.Findings)
	}
	scrubHoldsNone(t, in, filepath.Join(dir, "shared.sqlite"), append(body, other...))
}
