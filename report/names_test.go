package report

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/nsyscheck/nsyscheck/predictions"
	"github.com/nsyscheck/nsyscheck/ranks"
)

// sortedNames are names sorted, for comparing name lists.
func sortedNames(names []string) []string {
	out := append([]string(nil), names...)
	sort.Strings(out)
	return out
}

// TestNamesMatchFiles checks that the names known before drawing are the
// names of the files drawn: every shipped input's report, plots skipped
// and drawn, and the same without plots.
func TestNamesMatchFiles(t *testing.T) {
	for _, in := range inputs {
		rep := builtReport(t, in.path, in.link)
		files, err := rep.Files()
		if err != nil {
			t.Fatal(err)
		}
		if got, want := sortedNames(Names(rep.Result, Options{Link: in.link})), names(files); !slices.Equal(got, want) {
			t.Errorf("%s: Names = %v, Files holds %v", in.name, got, want)
		}
		if got := Names(rep.Result, Options{NoPlots: true}); !slices.Equal(got, []string{MarkdownFile, HTMLFile}) {
			t.Errorf("%s: Names without plots = %v", in.name, got)
		}
	}
}

// TestIndexNamesMatchPlot checks that the index's names hold the
// comparison plot's files exactly when the plot is drawn: with every
// shipped input, and with inputs that have no copy rows.
func TestIndexNamesMatchPlot(t *testing.T) {
	var full, bare []Entry
	for _, in := range inputs {
		full = append(full, Entry{Result: builtReport(t, in.path, in.link).Result, Dir: in.name})
		r := evaluate(t, in.path)
		predictions.CopyRows.Set(r, nil)
		bare = append(bare, Entry{Result: r, Dir: in.name})
	}
	for name, entries := range map[string][]Entry{"shipped": full, "no copy rows": bare} {
		ch, err := compareChart(entries)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{IndexHTMLFile, IndexMarkdownFile}
		if ch.plot != nil {
			want = append(want, plotFiles(comparePlotName)...)
		}
		if got := IndexNames(entries); !slices.Equal(got, want) {
			t.Errorf("%s: IndexNames = %v, want %v (plot skipped: %q)", name, got, want, ch.skipped)
		}
	}
	if got := IndexNames(bare); len(got) != 2 {
		t.Errorf("no copy rows: IndexNames = %v, want the pages alone", got)
	}
}

// TestRanksNames checks the ranks' names against the files of their
// drawn reports: plot drawn and plot skipped (TestAuditReport checks the
// audit's).
func TestRanksNames(t *testing.T) {
	for name, s := range map[string]*ranks.Summary{
		"a rank timed": {Region: "step", Rows: []ranks.Row{{Rank: "0", Region: "step", NowMs: 2, PinnedMs: 1}}},
		"none timed":   {Region: "step", Rows: []ranks.Row{{Rank: "0", Err: "unreadable"}}},
	} {
		rep, err := BuildRanks(s)
		if err != nil {
			t.Fatal(err)
		}
		files, err := rep.Files()
		if err != nil {
			t.Fatal(err)
		}
		if got, want := sortedNames(RanksNames(s)), names(files); !slices.Equal(got, want) {
			t.Errorf("ranks %s: RanksNames = %v, Files holds %v", name, got, want)
		}
	}
}

// TestCheckNames checks the refusals made before drawing: a name there
// already, a name that is a folder, a folder that is a file, another
// report's pages; none with a fresh folder, and --force lets the
// existing names through.
func TestCheckNames(t *testing.T) {
	dir := t.TempDir()
	list := []string{MarkdownFile, HTMLFile}
	if err := CheckNames(filepath.Join(dir, "new"), list, false); err != nil {
		t.Errorf("a folder not there yet: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, MarkdownFile), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	var exists *ExistsError
	if err := CheckNames(dir, []string{HTMLFile, MarkdownFile}, false); !errors.As(err, &exists) || !slices.Equal(exists.Names, []string{MarkdownFile}) {
		t.Errorf("report.md there: %v, want an ExistsError naming it", err)
	}
	if err := CheckNames(dir, list, true); err != nil {
		t.Errorf("report.md there, overwrite: %v", err)
	}
	if err := CheckNames(filepath.Join(dir, MarkdownFile), list, true); err == nil {
		t.Error("a file for the folder was let through")
	}
	if err := os.Mkdir(filepath.Join(dir, HTMLFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := CheckNames(dir, list, true); err == nil {
		t.Error("a folder where report.html goes was let through, even with overwrite")
	}
	var mix *MixError
	if err := CheckNames(dir, AuditFiles(), false); !errors.As(err, &mix) {
		t.Errorf("an audit's report beside a capture's: %v, want a MixError", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("CheckNames made a folder: %v", err)
	}
}

// The ranks' plot says below each rank its pageable share and whether it
// stands out, so that a rank standing out by its copies, not its time, is
// seen in the plot too; past maxLabelled ranks, a star marks it.
func TestRankLabels(t *testing.T) {
	rows := []ranks.Row{{Rank: "0", Pageable: 0.06}, {Rank: "2", Pageable: 0.41, Outlier: true}}
	if got, want := rankLabels(rows), []string{"0\n6% pageable", "2\n41% pageable\nstands out"}; !slices.Equal(got, want) {
		t.Errorf("labels %q, want %q", got, want)
	}
	many := make([]ranks.Row, maxLabelled+1)
	for i := range many {
		many[i] = ranks.Row{Rank: string(rune('a' + i)), Pageable: 0.5}
	}
	many[3].Outlier = true
	got := rankLabels(many)
	if got[0] != "a" || got[3] != "d*" {
		t.Errorf("past %d ranks: %q", maxLabelled, got)
	}
}
