package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadExpectationRefusesNoValue: an expected-audit file whose value no
// audit can give (a negative count or share, a status or verdict that is
// none) is refused, naming the key, not compared into a difference that
// never goes away; the shipped files are read.
func TestReadExpectationRefusesNoValue(t *testing.T) {
	for body, want := range map[string]string{
		`{"copies": -1}`: `copies: -1 is no count`,
		`{"findings": {"secretly-synchronous": -3}}`:                `findings.secretly-synchronous: -3 is no count`,
		`{"nvidiaRule": "agreed"}`:                                  `nvidiaRule: "agreed" is none of agree, disagree, unavailable`,
		`{"answer": "PASS"}`:                                        `answer: "PASS" is none of pass, fail, unavailable`,
		`{"regions": {"pass": {"fitWithin": -1}}}`:                  `regions.pass.fitWithin: -1 is no share`,
		`{"against": "x", "verdict": "HELD"}`:                       `verdict: "HELD" is none of held, died, unavailable`,
		`{"against": "x", "regions": {"pass": {"verdict": "won"}}}`: `regions.pass.verdict: "won" is none of`,
	} {
		p := filepath.Join(t.TempDir(), "expect.json")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadExpectation(p); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", body, err, want)
		}
	}
	shipped, err := filepath.Glob(filepath.Join("..", "testdata", "captures", "*", "audit-expect.json"))
	if err != nil || len(shipped) == 0 {
		t.Fatalf("no shipped expected-audit files: %v", err)
	}
	for _, p := range shipped {
		if _, err := ReadExpectation(p); err != nil {
			t.Errorf("shipped %s: %v", p, err)
		}
	}
}
