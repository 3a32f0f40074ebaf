package main

import (
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/environ"
)

// An NVTX range name holding CR, ESC, BEL, a newline and NEL is shown
// escaped the same way wherever the text output names it: in the region
// table and in the sentences wrapped around it (the answer, the region's
// note, "What to change"), where the wrapping once took CR, the newline
// and NEL for spaces between words ("pa ss" beside the table's
// "pa\x0dss"). No raw control byte reaches the output.
func TestControlCharactersEscapedAlike(t *testing.T) {
	name := "pa\rss\x1b[2J\ay\nz\u0085w"
	const escaped = `pa\x0dss\x1b[2J\x07y\x0az\u0085w`
	p := pairEdit("pipeline", `UPDATE NVTX_EVENTS SET text = 'pa' || char(13) || 'ss' || char(27) || '[2J' || char(7) || 'y' || char(10) || 'z' || char(133) || 'w' WHERE text = 'pass'`)(t, t.TempDir())[0]
	env := environ.With(map[string]string{"COLUMNS": "100", "XDG_CACHE_HOME": t.TempDir()})
	code, out, errOut := runMainIn(t, env, []string{"audit", p, "--nvidia-rule", "off"})
	if code != 1 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	for _, c := range []string{"\r", "\x1b", "\a", "\u0085", name} {
		if strings.Contains(out, c) {
			t.Errorf("the output holds %q raw", c)
		}
	}
	section := func(title string) string {
		i := strings.Index(out, title)
		if i < 0 {
			t.Fatalf("no %q in:\n%s", title, out)
		}
		rest := out[i:]
		if j := strings.Index(rest, "\n\n"); j >= 0 {
			rest = rest[:j]
		}
		return rest
	}
	table, advice := section("Regions (ms):"), section("What to change")
	if !strings.Contains(table, "\n"+escaped+" ") {
		t.Errorf("the region table lacks a row of %s:\n%s", escaped, table)
	}
	// The advice wraps: its lines joined, the name is one word.
	if joined := strings.Join(strings.Fields(advice), " "); !strings.Contains(joined, "["+escaped+"]") {
		t.Errorf("What to change lacks [%s]:\n%s", escaped, advice)
	}
	if joined := strings.Join(strings.Fields(out), " "); !strings.Contains(joined, " "+escaped+": ") || strings.Contains(joined, "pa ss") {
		t.Errorf("the region's note does not name %s as the table does:\n%s", escaped, out)
	}
}
