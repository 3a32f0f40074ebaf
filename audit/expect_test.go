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

// TestReadExpectationRefusesContradiction edits the shipped expected audit
// of the training pair into values no one audit gives together: each is
// refused, naming the file and both keys, not compared into differences
// that never go away.
func TestReadExpectationRefusesContradiction(t *testing.T) {
	shipped, err := os.ReadFile(filepath.Join("..", "testdata", "captures", "train-pageable", "audit-expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, old, new, want string }{
		{"more pageable copies than copies", `"pageableHtod": 140`, `"pageableHtod": 900`,
			"pageableHtod: 900 pageable host-to-device copies, more than the 207 copies in all (copies)"},
		{"a finding past the copies", `"secretly-synchronous": 140`, `"secretly-synchronous": 500`,
			"findings.secretly-synchronous: 500 copies, more than the 207 copies in all (copies)"},
		{"API kinds past the copies", `"copies": 207,`, `"copies": 207, "apiKinds": {"async": 200, "blocking": 9223372036854775807},`,
			"apiKinds: the copies of its API kinds add up to more than the 207 copies in all (copies)"},
		{"a region died beside a check held", `"verdict": "held",
      "faster": false`, `"verdict": "died",
      "faster": false`, "verdict: held, but regions.step.verdict is died, and a check dies when a region it judges dies"},
	}
	for _, c := range cases {
		body := strings.Replace(string(shipped), c.old, c.new, 1)
		if body == string(shipped) {
			t.Fatalf("%s: the shipped file holds no %s", c.name, c.old)
		}
		p := filepath.Join(t.TempDir(), "audit-expect.json")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadExpectation(p); err == nil || !strings.Contains(err.Error(), p+": "+c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
}
