package privacy

import (
	"bytes"
	"context"
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
	size := int64(len(data))
	pm := &pageMap{unused: []span{{0, size}}}
	s := newRawSearch(bytes.NewReader(data), size, pm, map[string]bool{})
	if err := s.unusedText(context.Background()); err != nil {
		t.Fatal(err)
	}
	var r Report
	s.findings(&r)
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
