package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/privacy"
)

// A list of findings cut short ends with how many strings it leaves out,
// not how many findings: a finding past the cap that counts the values
// the scan did not keep (privacy.OtherValues, More of them besides its
// own) tells 1+More strings, as the head's count of strings does.
func TestMoreCountsStringsLeftOut(t *testing.T) {
	var fs []privacy.Finding
	for i := range 10 {
		fs = append(fs, privacy.Finding{Kind: privacy.KindSecret, Name: fmt.Sprintf("TOKEN%d", i), Where: "raw bytes at offset 1 (" + privacy.UnusedPages + ")",
			Offset: int64(i), Masked: "gh…", Unused: true})
	}
	// The last one counts 4,999 values past the cap besides its own.
	fs[9].Masked, fs[9].More = privacy.OtherValues, 4999
	got := exposureWords(privacy.Exposure{File: "capture.sqlite", Kind: privacy.ExposesUnused, Findings: fs})
	// 10 findings telling 5,009 strings; 8 named, the two left out tell
	// 1 and 5,000.
	for _, want := range []string{"5009 strings", "5009 of them credential-like", "and 5001 more"} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "and 2 more") {
		t.Errorf("counts the findings left out, not their strings:\n%s", got)
	}
	// Where every finding is one string, the count is of findings.
	var vars []privacy.Finding
	for i := range 13 {
		vars = append(vars, privacy.Finding{Kind: privacy.KindEnv, Name: fmt.Sprintf("VAR%d", i), Where: "the process's environment", Masked: "x…"})
	}
	env := exposureWords(privacy.Exposure{File: "capture.sqlite", Kind: privacy.ExposesEnvironment, Where: "the process's environment", Findings: vars})
	if !strings.Contains(env, "VAR11=x…, and 1 more") {
		t.Errorf("environment: lacks \"and 1 more\":\n%s", env)
	}
}
