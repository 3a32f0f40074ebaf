package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nsyscheck/nsyscheck"
	"github.com/nsyscheck/nsyscheck/check"
	"github.com/nsyscheck/nsyscheck/internal/regular"
	"github.com/nsyscheck/nsyscheck/predictions"
	"github.com/nsyscheck/nsyscheck/report"
	"github.com/nsyscheck/nsyscheck/runner"
)

// writeRunReports writes the verdicts into the run folder: report.txt for a
// terminal, verdicts.json for scripts, and report.md and report.html with
// their plots for a person.
func writeRunReports(run *runner.Run, k *check.Checked) error {
	r := k.Result
	var text bytes.Buffer
	// A file read later: every evidence line, at the default width.
	if err := report.Text(&text, r, report.TextOptions{Verbose: true}); err != nil {
		return err
	}
	if err := writeNew(run.Path("report.txt"), text.Bytes()); err != nil {
		return err
	}
	var data bytes.Buffer
	if err := report.WriteJSON(&data, report.VerifyEnvelope([]*predictions.Result{r}, buildVersion())); err != nil {
		return err
	}
	if err := writeNew(run.Path("verdicts.json"), data.Bytes()); err != nil {
		return err
	}
	rep, err := report.Build(r, report.Options{Link: report.LinkOf(k.PCIe())})
	if err != nil {
		return err
	}
	_, err = rep.WriteDir(run.Dir, false)
	return err
}

// writeNew writes a file that must not exist yet, cleaned as a report's
// files are (report.CleanFile: credentials masked, control characters
// escaped).
func writeNew(path string, data []byte) error {
	data = report.CleanFile(filepath.Base(path), data)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// inputMarker is the file each report folder holds that says which input
// it is the report of, so that the folders report names itself are never
// one holding another input's report (reportFolders): a hash of the
// input's absolute path (inputID), never the path itself, since a report
// folder is made to be shared.
const inputMarker = ".nsyscheck-input"

// shippedID stands for the capture shipped inside nsyscheck, whose
// temporary copy has a new path each run.
const shippedID = shippedPrefix + nsyscheck.ShippedName

// inputIDs names each input for its report folder's marker (inputID); with
// no paths, the shipped capture.
func inputIDs(paths []string) []string {
	if len(paths) == 0 {
		return []string{shippedID}
	}
	ids := make([]string, len(paths))
	for i, p := range paths {
		ids[i] = inputID(p)
	}
	return ids
}

// inputID is "sha256:" and the hash of the input's absolute path, links
// resolved where they can be.
func inputID(path string) string {
	p, err := filepath.Abs(path)
	if err != nil {
		p = path
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	sum := sha256.Sum256([]byte(filepath.Clean(p)))
	return "sha256:" + hex.EncodeToString(sum[:16])
}

// refuseRepeats refuses inputs that name one file twice (the same
// inputID: one absolute path, links resolved), which would give one
// capture two report folders and two rows of the index.
func refuseRepeats(paths, ids []string) error {
	first := map[string]string{}
	for i, id := range ids {
		if i >= len(paths) {
			break
		}
		if p, ok := first[id]; ok {
			return fmt.Errorf("report: one capture is given twice, as %s and as %s: give each capture once", p, paths[i])
		}
		first[id] = paths[i]
	}
	return nil
}

// ownFolder reports whether the report of the input id may be written to
// dir: dir does not exist, is empty, or holds this input's report (its
// marker names id). A folder holding another input's report, or anything
// without a marker (the user's files, a report of one input written
// straight to -o), is not the input's.
func ownFolder(dir, id string) bool {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(entries) == 0 {
		return true
	}
	data, err := regular.ReadFile(filepath.Join(dir, inputMarker), 1024)
	return err == nil && strings.TrimSpace(string(data)) == id
}

// reportFolders names one folder of out per input, after its last path
// element (a file's without its extension), so that no two inputs share
// one and none takes the name of a file the index writes beside them
// (index.html, compare.png, ...: a capture named compare.png.sqlite), the
// names compared without case as some file systems do. A name taken gets
// -2, -3, ..., skipping the plain names of the other inputs (an input
// named x-2 keeps x-2) and folders that hold anything but this input's
// report (ownFolder), so --force never replaces one input's report with
// another's; a folder holding this input's report is used again.
func reportFolders(out string, paths, ids []string) []string {
	taken := map[string]bool{}
	for _, n := range append(report.TopFiles(), inputMarker) {
		taken[strings.ToLower(n)] = true
	}
	bases := make([]string, len(paths))
	plain := map[string]int{} // plain names of the inputs, by how many inputs have them
	for i, p := range paths {
		bases[i] = folderBase(p)
		plain[strings.ToLower(bases[i])]++
	}
	dirs := make([]string, len(paths))
	for i, base := range bases {
		for n := 1; ; n++ {
			name := base
			if n > 1 {
				name = fmt.Sprintf("%s-%d", base, n)
			}
			key := strings.ToLower(name)
			if taken[key] || n > 1 && plain[key] > 0 {
				continue
			}
			if !ownFolder(filepath.Join(out, name), ids[i]) {
				continue
			}
			taken[key] = true
			dirs[i] = filepath.Join(out, name)
			break
		}
	}
	return dirs
}

// folderBase is the name an input's report folder starts from: its last
// path element, a file's without its extension, with no leading dots (a
// hidden name, or one the writer's temporary folders start with) and no
// control characters.
func folderBase(p string) string {
	base := filepath.Base(filepath.Clean(p))
	if st, err := os.Stat(p); err == nil && !st.IsDir() {
		base = strings.TrimSuffix(base, filepath.Ext(base))
	}
	base = strings.TrimLeft(base, ".")
	base = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == filepath.Separator {
			return '_'
		}
		return r
	}, base)
	if base == "" {
		return "input"
	}
	return base
}
