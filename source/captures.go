package source

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

// Captures lists the captures an argument names, each to be opened on its
// own (one capture per rank of a distributed job, as nsys profile -o
// report.%q{RANK} writes them): a file is itself; a folder is each capture
// in it, one per base name (the SQLite export where there is one, else the
// .nsys-rep), else each folder in it that holds a capture; a pattern with
// *, ? or [ that names no file is its matches, each taken the same way.
// Captures of one base name come once, in name order within an argument.
func Captures(arg string) ([]string, error) {
	if _, err := os.Stat(arg); err != nil && strings.ContainsAny(arg, "*?[") {
		matches, gerr := filepath.Glob(arg)
		if gerr != nil {
			return nil, &inputerr.Error{Path: arg, Problem: "is not a pattern of file names", Err: gerr,
				Hint: "quote a pattern such as 'run/report.*.nsys-rep' so that nsyscheck expands it"}
		}
		if len(matches) == 0 {
			return nil, &inputerr.Error{Path: arg, Problem: "matches no file", Hint: "check the pattern and the folder"}
		}
		var out []string
		var skipped []string
		for _, m := range matches {
			if !mayBeCapture(m) {
				skipped = append(skipped, m)
				continue
			}
			c, err := Captures(m)
			if err != nil {
				return nil, err
			}
			out = append(out, c...)
		}
		if len(out) == 0 {
			return nil, &inputerr.Error{Path: arg, Problem: fmt.Sprintf("matches no capture: %s, none an export, a report or another input nsyscheck reads alone (the first: %s)", files(len(skipped)), skipped[0]),
				Hint: "match the captures themselves, as 'run/report.*.nsys-rep', or give their folder"}
		}
		return onePerBase(dedupe(out)), nil
	}
	st, err := os.Stat(arg)
	if err != nil {
		return nil, &inputerr.Error{Path: arg, Problem: "cannot be read", Err: err}
	}
	if !st.IsDir() {
		return []string{arg}, nil
	}
	entries, err := os.ReadDir(arg)
	if err != nil {
		return nil, &inputerr.Error{Path: arg, Problem: "cannot list the folder", Err: err}
	}
	f := classifyDir(entries)
	byBase := map[string]string{}
	for _, names := range [][]string{f.reps, f.ownSQLite, f.plainSQLite} { // the later wins: an export over its report
		for _, n := range names {
			byBase[baseName(n)] = filepath.Join(arg, n)
		}
	}
	var out []string
	for _, p := range byBase {
		out = append(out, p)
	}
	sort.Strings(out)
	if len(out) > 1 || (len(out) == 1 && !f.hasCSV) {
		return out, nil
	}
	if subs := captureFolders(arg, entries); len(subs) > 1 || (len(subs) == 1 && len(out) == 0 && !f.hasCSV) {
		out = out[:0]
		for _, s := range subs {
			out = append(out, filepath.Join(arg, s))
		}
		return out, nil
	}
	return []string{arg}, nil // one capture: the folder's own, as Open reads it
}

// files counts files in words.
func files(n int) string {
	if n == 1 {
		return "1 file"
	}
	return fmt.Sprintf("%d files", n)
}

// mayBeCapture says whether a pattern's match may be a capture of its
// own: a folder, or a file that Sniff tells as an input other than one
// CSV report (a capture's reports are read as their folder). A pattern
// such as run/report.* also matches what nsys and the job wrote beside
// the captures (report.0.stdout.txt, report.0_cuda_memcpy_async.csv),
// which no reader takes alone; a file that cannot be read is kept, for
// its reader to say why.
func mayBeCapture(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return true
	}
	head := make([]byte, nsysdb.SniffSize)
	n, _ := io.ReadFull(f, head)
	k := nsysdb.Sniff(path, head[:n])
	return k != nsysdb.KindUnknown && k != nsysdb.KindCSV
}

// onePerBase keeps one capture file of each base name in a folder, as a
// folder's listing does: the SQLite export over nsyscheck's own export
// over the report (a pattern such as report.* matches report.3.nsys-rep
// and report.3.sqlite, one rank). Folders and other files are kept; the
// order is kept, each base name where it first came.
func onePerBase(paths []string) []string {
	rank := func(p string) nameKind {
		if k := kindByName(filepath.Base(p)); k <= nameSQLite {
			return k
		}
		return nameOther
	}
	at := map[string]int{} // base name -> index in out
	var out []string
	for _, p := range paths {
		r := rank(p)
		if r == 0 {
			out = append(out, p)
			continue
		}
		k := filepath.Join(filepath.Dir(p), baseName(filepath.Base(p)))
		if i, ok := at[k]; ok {
			if r > rank(out[i]) {
				out[i] = p
			}
			continue
		}
		at[k] = len(out)
		out = append(out, p)
	}
	return out
}

// dedupe drops later repeats of a path, keeping the order.
func dedupe(paths []string) []string {
	seen := map[string]bool{}
	out := paths[:0]
	for _, p := range paths {
		if k := filepath.Clean(p); !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	return out
}
