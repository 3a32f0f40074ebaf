package privacy

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"
)

// TestScrubStaleValuesScale: a capture whose deleted rows hold about
// 10,000 distinct credentials is scrubbed of all of them, and a scrub of
// the scrubbed copy finds none of them again. How long it takes is
// BenchmarkScrubStaleValues' (a query per 500 values per column took 10 to
// 13 s on the 2-core machine this was measured on, one pass a column 0.4
// s).
func TestScrubStaleValuesScale(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a capture of 10,000 stale values")
	}
	dir := t.TempDir()
	in := deletedPasswordsFixture(t, dir, 340, 10)
	out := filepath.Join(dir, "shared.sqlite")
	rep, err := Scrub(in, out, ScrubOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) < 9000 {
		t.Fatalf("%d findings, want about 10,000", len(rep.Findings))
	}
	var secrets []string
	for _, n := range []int{0, 1234, 3399} {
		secrets = append(secrets, fmt.Sprintf("Pw%08x", n), fmt.Sprintf("Run%08x", n), fmt.Sprintf("Tk%08x", n))
	}
	scrubHoldsNone(t, in, filepath.Join(dir, "again.sqlite"), secrets)
}

// TestValueMatcher: the values a row holds are found wherever they
// overlap or share a head, and redacted in the values' order; a value that
// only a redaction made is redacted too; a row holding none is told so.
func TestValueMatcher(t *testing.T) {
	m := newValueMatcher([][]byte{[]byte("abcdef"), []byte("abcd"), []byte("cdefgh"), []byte("x" + Redacted + "y"), []byte("pw12")})
	for _, c := range []struct{ in, want string }{
		{"..abcdefgh..", ".." + Redacted + "gh.."}, // abcdef first, in the values' order
		{"abcd abcdxx cdefgh", Redacted + " " + Redacted + "xx " + Redacted},
		{"xpw12y", Redacted}, // x[redacted]y after pw12's redaction
		{"nothing here", ""},
	} {
		got, ok := m.redact([]byte(c.in))
		if c.want == "" {
			if ok {
				t.Errorf("%q: redacted to %q, want untouched", c.in, got)
			}
			continue
		}
		if !ok || !bytes.Equal(got, []byte(c.want)) {
			t.Errorf("%q: %q (%v), want %q", c.in, got, ok, c.want)
		}
	}
}
