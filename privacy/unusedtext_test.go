package privacy

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnusedTextLongRun: a run of text in unused space longer than one
// piece (unusedTextMax) is read in pieces that overlap; a password in the
// overlap is counted once, and one on each side of it once each.
func TestUnusedTextLongRun(t *testing.T) {
	secret := "db_password=Hunter2Hunter2"
	data := bytes.Repeat([]byte("a"), unusedTextMax+unusedTextMax/2)
	// In the bytes both the first and the second piece hold.
	inOverlap := unusedTextMax - unusedTextOverlap/2
	copy(data[inOverlap:], " "+secret+" ")
	copy(data[100:], " "+secret+" ")
	copy(data[len(data)-200:], " "+secret+" ")
	r := unusedFindings(t, data)
	n := 0
	for _, f := range r.Findings {
		if strings.Contains(f.Name, "password") {
			n += 1 + f.More
		}
	}
	if n != 3 {
		t.Errorf("the password counted %d times, want 3: %+v", n, r.Findings)
	}
}

// TestUnusedTextDistinctCap: past rawUnusedMax distinct values in unused
// space, further values are not kept but counted, one finding a name, so
// that every hit is still told.
func TestUnusedTextDistinctCap(t *testing.T) {
	defer func(n int) { rawUnusedMax = n }(rawUnusedMax)
	rawUnusedMax = 5
	var b strings.Builder
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, "\x00 db_password=Hunter%04d \x00", i)
	}
	b.WriteString("\x00 db_password=Hunter0003 \x00") // a value kept, seen again
	data := []byte(b.String())
	r := unusedFindings(t, data)
	kept, over, hits := 0, 0, 0
	for _, f := range r.Findings {
		if f.Name != "db_password" || !f.Unused {
			t.Errorf("finding %+v, want db_password in unused space", f)
		}
		hits += 1 + f.More
		if f.Masked == OtherValues {
			over++
			if f.value != "" || f.More != 14 {
				t.Errorf("the values past the cap: %+v, want 15 hits and no value", f)
			}
		} else {
			kept++
		}
	}
	if kept != 5 || over != 1 || hits != 21 {
		t.Errorf("%d values kept, %d counted past the cap, %d hits; want 5, 1, 21: %+v", kept, over, hits, r.Findings)
	}
}

// TestScrubManyStaleValues: a capture whose deleted rows hold more
// distinct credentials than one SQLite expression may test is scrubbed,
// where the query looking for them all at once was refused.
func TestScrubManyStaleValues(t *testing.T) {
	dir := t.TempDir()
	in := deletedPasswordsFixture(t, dir, 50, 10)
	rep, err := ScanPath(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) <= 1000 {
		t.Fatalf("%d findings in the deleted rows, want more than 1000", len(rep.Findings))
	}
	scrubHoldsNone(t, in, filepath.Join(dir, "shared.sqlite"), []string{"Pw000007c0", "Run000007c0", "Tk000007c0"})
}

// unusedFindings runs the unused-text pass over data, all of it unused
// space, and returns what it found.
func unusedFindings(t *testing.T, data []byte) Report {
	t.Helper()
	size := int64(len(data))
	pm := &pageMap{unused: []span{{0, size}}}
	s := newRawSearch(bytes.NewReader(data), size, pm, map[string]bool{})
	if err := s.unusedText(context.Background()); err != nil {
		t.Fatal(err)
	}
	var r Report
	s.findings(&r)
	return r
}
