package privacy

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

// TestUnusedGluedHeaderByte: deleted rows of a shipped export whose
// record header's last byte, the string's serial type, is a text byte
// glued to the string's first word ("=curl", "?--password", "5token="):
// each credential is still found in the unused pages, where the glued byte
// hid curl, the option, the name and sudo from the detectors.
func TestUnusedGluedHeaderByte(t *testing.T) {
	rows := []struct{ text, secret string }{
		{"curl -u bob:S3cretPw99 x", "S3cretPw99"},         // 24 bytes: serial type 61, "="
		{"--password Hunter2Hunter2", "Hunter2Hunter2"},    // 25: 63, "?"
		{"token=abcdef12345678", "abcdef12345678"},         // 20: 53, "5"
		{"sudo mysql -pS3cret99 db", "S3cret99"},           // 24: "="
		{"api_key=Zq7Xw2Vb9Nm4Lk8Jh", "Zq7Xw2Vb9Nm4Lk8Jh"}, // 25: "?"
		{"curl -H 'Authorization: Bearer abcdef0123456789ABCDEFghijkl' https://api.example.com/v1", "abcdef0123456789ABCDEFghijkl"},
	}
	var texts []string
	for _, r := range rows {
		texts = append(texts, r.text)
	}
	p, raw := deletedRowsFixture(t, texts)
	rep, err := ScanPath(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		i := bytes.Index(raw, []byte(r.text))
		if i < 1 || !textByte[raw[i-1]] {
			t.Fatalf("%q: not in the file after a text byte (at %d): the case is not made", r.text, i)
		}
		if !hasValue(rep, r.secret, true) {
			t.Errorf("%q after the byte %q: %q not found in unused space: %+v", r.text, raw[i-1], r.secret, rep.Findings)
		}
	}
}

// deletedRowsFixture copies the shipped export, adds texts to StringIds,
// then strings it keeps after them, and deletes texts with secure_delete
// off; it returns the copy and its bytes.
func deletedRowsFixture(t *testing.T, texts []string) (string, []byte) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "glued.sqlite")
	if err := copyFile("../testdata/captures/h200-pinned/pinned.sqlite", nil, p); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", nsysdb.URI(p, "mode=rw"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`PRAGMA secure_delete = OFF`); err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		if _, err := db.Exec(`INSERT INTO StringIds (id, value) VALUES (?, ?)`, 990300+i, text); err != nil {
			t.Fatal(err)
		}
	}
	// Strings kept after them keep their page full: a page left nearly
	// empty is rebuilt, the deleted bytes gone with it.
	if _, err := db.Exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i < 59)
		INSERT INTO StringIds (id, value) SELECT 990400 + i, 'kept string number ' || i FROM n`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM StringIds WHERE id BETWEEN 990300 AND 990399`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return p, raw
}

// TestUnusedBearer: a Bearer token and curl's --oauth2-bearer TOKEN in
// deleted rows are found in the unused pages, as they are in a live
// string, where the unused-space pass kept only named values and keys.
func TestUnusedBearer(t *testing.T) {
	tokens := []string{"abcdef0123456789ABCDEFghijkl", "Zyxwvu9876543210ZYXWVUtsrqpo"}
	p, _ := deletedRowsFixture(t, []string{`curl -H "Bearer ` + tokens[0] + `" https://api.example.com/v1/models`,
		"curl --oauth2-bearer " + tokens[1] + " https://api.example.com/v1/models"})
	rep, err := ScanPath(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range tokens {
		if !hasValue(rep, tok, true) {
			t.Errorf("%s not found in unused space: %+v", tok, rep.Findings)
		}
	}
}
