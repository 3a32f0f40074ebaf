package report

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/nsyscheck/nsyscheck/internal/ctlchar"
	"github.com/nsyscheck/nsyscheck/internal/leftover"
	"github.com/nsyscheck/nsyscheck/internal/regular"
	"github.com/nsyscheck/nsyscheck/privacy"
)

// tmpPrefix starts the name of the temporary folder a report is written
// into before it is moved into place; the writer's process id follows, so
// that a later run can tell a leftover of a killed run from a live one.
const tmpPrefix = ".nsyscheck-report-"

// createFile creates a file for writing; tests replace it to fail on cue.
var createFile = func(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
}

// renameFile moves a file or folder into place; tests replace it to fail
// on cue.
var renameFile = os.Rename

// PlaceHook, when not nil, is called once every file of a set is written
// into its temporary folder, before any is moved into place, with the
// folders being written; tests use it to send a signal at a known point.
var PlaceHook func(dirs []string)

// Folder is one folder of a set WriteSet writes: the files (by name) to
// write into Dir, and the names of files an earlier report in Dir may have
// left that this one does not write (Stale: its plots not drawn), which
// are removed with the rest of the earlier report so that no folder holds
// one input's report beside another's plots.
type Folder struct {
	Dir   string
	Files map[string][]byte
	Stale []string
}

// writeFiles writes one folder as a set of one (WriteSet).
func writeFiles(dir string, files map[string][]byte, overwrite bool) ([]string, error) {
	placed, err := WriteSet([]Folder{{Dir: dir, Files: files}}, overwrite)
	if err != nil {
		return nil, err
	}
	return placed[0], nil
}

// WriteSet writes the folders of a set so that no reader ever sees a
// partial report, nothing is written through a link, and a set that fails
// leaves every folder as it was:
//
//   - every folder's files are written into a fresh private temporary
//     folder first, all of them before any is put in place; a failure (a
//     full disk, a name that exists without overwrite) removes them and
//     leaves every folder as it was;
//   - a folder that does not exist yet is its temporary folder, renamed
//     into place whole; a folder that holds nothing but files of this
//     report (a report written before, or an empty folder), and holds no
//     other folder of the set, is swapped with it in one atomic exchange
//     (renameat2 RENAME_EXCHANGE); so a run killed at any point leaves it
//     either as it was or whole;
//   - a folder that holds other files too (the user's, other folders of the
//     set) is not swapped: each file is renamed into it in turn, which
//     replaces a link planted there instead of writing through it, the
//     file it replaces set aside in the temporary folder;
//   - if putting a folder in place fails, the folders already put in place
//     are put back as they were (the new ones removed, an exchange undone,
//     the files set aside renamed back), and the folders the set created
//     are removed;
//   - without overwrite, a name that exists in a folder already (a link
//     included) is refused before anything is written;
//   - temporary folders that killed runs left behind are removed first.
//
// Every file passes through CleanFile on the way (credentials masked,
// control characters escaped). It returns each folder's written paths.
func WriteSet(set []Folder, overwrite bool) ([][]string, error) {
	ws := make([]*folderWrite, len(set))
	dirs := make([]string, len(set))
	seen := map[string]bool{}
	for i, f := range set {
		dir := filepath.Clean(f.Dir)
		if seen[dir] {
			return nil, fmt.Errorf("two reports would be written to %s", dir)
		}
		seen[dir] = true
		ws[i], dirs[i] = &folderWrite{dir: dir, files: f.Files, list: names(f.Files), stale: f.Stale}, dir
	}
	var created []string
	defer func() {
		for _, w := range ws {
			if w != nil {
				w.cleanup()
			}
		}
		// Folders the set made for itself and left empty (after a
		// failure), deepest first.
		for i := len(created) - 1; i >= 0; i-- {
			os.Remove(created[i])
		}
	}()
	for _, w := range ws {
		made, err := w.stage(overwrite, holdsAnother(w.dir, dirs))
		created = append(created, made...)
		if err != nil {
			return nil, err
		}
	}
	if PlaceHook != nil {
		PlaceHook(dirs)
	}
	out := make([][]string, len(ws))
	for i, w := range ws {
		if err := w.place(); err != nil {
			for j := i; j >= 0; j-- {
				ws[j].undo()
			}
			return nil, fmt.Errorf("%w (every folder of the report was left as it was)", err)
		}
		out[i] = w.paths()
	}
	created = nil // all in place: they hold the reports now
	return out, nil
}

// holdsAnother reports whether another folder of the set lies inside dir.
func holdsAnother(dir string, dirs []string) bool {
	for _, d := range dirs {
		if d != dir && strings.HasPrefix(d, dir+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// folderWrite is one folder of a set: where its files were written and
// how they were put in place, so that a failure can put it back.
type folderWrite struct {
	dir   string
	files map[string][]byte
	list  []string // the files' names, sorted
	stale []string // names of an earlier report's files this one does not write

	exists, swap bool
	tmp          string // the temporary folder the files were written into

	whole    bool     // tmp was renamed to dir (dir did not exist)
	swapped  bool     // tmp and dir were exchanged: tmp holds dir's old files
	renamed  []string // names renamed into dir one by one
	removed  []string // stale names moved out of dir into tmp
	setAside map[string]bool
}

// setAsidePrefix names, in the temporary folder, a file that one of the
// report's files replaced in its folder, kept until the set is in place.
const setAsidePrefix = ".replaced-"

// stage checks the folder (checkOutputDir) and writes its files into a
// new temporary folder: beside it when it is new or will be swapped
// (never when the set writes other folders inside it), else inside it. It
// returns the parent folders it created.
func (w *folderWrite) stage(overwrite, noSwap bool) (created []string, err error) {
	parent := filepath.Dir(w.dir)
	created = missingFolders(parent)
	w.exists, err = checkOutputDir(w.dir, parent, w.list, overwrite)
	if err != nil {
		return created, err
	}
	w.swap = w.exists && !noSwap && onlyReportFiles(w.dir, append(append([]string(nil), w.list...), w.stale...)) && dirWritable(parent)
	where := w.dir
	if !w.exists || w.swap {
		where = parent
	}
	tmp, err := os.MkdirTemp(where, tmpPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return created, fmt.Errorf("cannot write in %s: %w", where, unwrapPath(err))
	}
	w.tmp = tmp
	for _, n := range w.list {
		if err := writeOne(filepath.Join(tmp, n), CleanFile(n, w.files[n])); err != nil {
			return created, fmt.Errorf("write %s: %w (nothing was written to %s)", filepath.Join(w.dir, n), err, w.dir)
		}
	}
	return created, nil
}

// missingFolders lists dir and those of its parents that do not exist,
// outermost first.
func missingFolders(dir string) []string {
	var out []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || d == filepath.Dir(d) {
			break
		}
		out = append([]string{d}, out...)
	}
	return out
}

// paths are the folder's files as placed.
func (w *folderWrite) paths() []string {
	out := make([]string, len(w.list))
	for i, n := range w.list {
		out[i] = filepath.Join(w.dir, n)
	}
	return out
}

// place puts the staged files in place: a new folder is the temporary one
// renamed; a folder holding only an earlier report is exchanged with it in
// one step; otherwise, or where the file system cannot exchange, each file
// is renamed into the folder in turn, a file it replaces set aside first.
func (w *folderWrite) place() error {
	if !w.exists {
		if err := os.Chmod(w.tmp, 0o755); err != nil {
			return fmt.Errorf("write %s: %w", w.dir, unwrapPath(err))
		}
		if err := renameFile(w.tmp, w.dir); err != nil {
			return fmt.Errorf("cannot move the report into %s: %w", w.dir, unwrapPath(err))
		}
		w.whole = true
		return nil
	}
	if w.swap {
		if st, err := os.Stat(w.dir); err == nil {
			_ = os.Chmod(w.tmp, st.Mode().Perm())
		}
		if unix.Renameat2(unix.AT_FDCWD, w.tmp, unix.AT_FDCWD, w.dir, unix.RENAME_EXCHANGE) == nil {
			w.swapped = true // tmp now holds the files dir held
			return nil
		}
		// A file system without the exchange: rename file by file below.
		// Files written in the parent's temporary folder rename into dir
		// just as well.
	}
	w.setAside = map[string]bool{}
	for _, n := range w.list {
		target := filepath.Join(w.dir, n)
		if _, err := os.Lstat(target); err == nil {
			if err := os.Rename(target, filepath.Join(w.tmp, setAsidePrefix+n)); err != nil {
				return fmt.Errorf("cannot move %s aside to replace it: %w", target, unwrapPath(err))
			}
			w.setAside[n] = true
		}
		if err := renameFile(filepath.Join(w.tmp, n), target); err != nil {
			if w.setAside[n] {
				_ = os.Rename(filepath.Join(w.tmp, setAsidePrefix+n), target)
				delete(w.setAside, n)
			}
			return fmt.Errorf("cannot move %s into place: %w", target, unwrapPath(err))
		}
		w.renamed = append(w.renamed, n)
	}
	for _, n := range w.stale {
		target := filepath.Join(w.dir, n)
		if st, err := os.Lstat(target); err != nil || !st.Mode().IsRegular() && st.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		if err := os.Rename(target, filepath.Join(w.tmp, setAsidePrefix+n)); err != nil {
			return fmt.Errorf("cannot remove %s, an earlier report's file: %w", target, unwrapPath(err))
		}
		w.removed = append(w.removed, n)
	}
	return nil
}

// undo puts the folder back as it was before place.
func (w *folderWrite) undo() {
	switch {
	case w.whole:
		if os.Rename(w.dir, w.tmp) == nil {
			w.whole = false // cleanup removes it as a temporary folder again
		}
	case w.swapped:
		if unix.Renameat2(unix.AT_FDCWD, w.tmp, unix.AT_FDCWD, w.dir, unix.RENAME_EXCHANGE) == nil {
			w.swapped = false
		}
	default:
		for i := len(w.removed) - 1; i >= 0; i-- {
			n := w.removed[i]
			_ = os.Rename(filepath.Join(w.tmp, setAsidePrefix+n), filepath.Join(w.dir, n))
		}
		w.removed = nil
		for i := len(w.renamed) - 1; i >= 0; i-- {
			n := w.renamed[i]
			target := filepath.Join(w.dir, n)
			if w.setAside[n] {
				_ = os.Rename(filepath.Join(w.tmp, setAsidePrefix+n), target)
			} else {
				_ = os.Remove(target)
			}
		}
		w.renamed = nil
	}
}

// cleanup removes the temporary folder, with the earlier files it holds
// once the set is in place, unless it became the folder itself.
func (w *folderWrite) cleanup() {
	if w.tmp != "" && !w.whole {
		os.RemoveAll(w.tmp)
	}
}

// checkOutputDir looks at dir before anything is written (refusal): it
// must be a folder or absent (then its parent is created), and without
// overwrite none of the names in list may exist in it already; a name that
// exists as a folder is refused even with overwrite. It removes the
// temporary folders that killed runs left in parent and dir, and says
// whether dir exists.
func checkOutputDir(dir, parent string, list []string, overwrite bool) (bool, error) {
	exists, err := refusal(dir, list, overwrite)
	if err != nil {
		return false, err
	}
	if !exists {
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return false, fmt.Errorf("cannot create %s: %w", parent, unwrapPath(err))
		}
	}
	sweepStale(parent)
	if exists {
		sweepStale(dir)
	}
	return exists, nil
}

// danglingLink refuses an output folder that is, or lies in, a link to
// nothing: the report would be renamed over the link, or its folders
// could not be made through it.
func danglingLink(dir string) error {
	for d := filepath.Clean(dir); d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err != nil {
			continue
		}
		if target, ok := regular.DanglingLink(d); ok {
			return fmt.Errorf("%s is a link to %s, which does not exist: create that folder first, remove the link, or give another folder for the reports", d, ctlchar.Escape(target))
		}
		return nil
	}
	return nil
}

// refusal is why files named list may not be written into dir, if they
// may not: dir is a file, a name is a folder there, or (without overwrite)
// a name exists there already or dir holds another kind of report. It
// changes nothing, and says whether dir exists.
func refusal(dir string, list []string, overwrite bool) (bool, error) {
	st, err := os.Stat(dir)
	exists := err == nil
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return false, fmt.Errorf("cannot use %s as the output folder: %w", dir, unwrapPath(err))
	case exists && !st.IsDir():
		return false, fmt.Errorf("%s is a file, not a folder: give a folder for the reports", dir)
	case !exists:
		if err := danglingLink(dir); err != nil {
			return false, err
		}
		return false, nil
	}
	var clash []string
	for _, n := range list {
		st, err := os.Lstat(filepath.Join(dir, n))
		switch {
		case err == nil && st.IsDir():
			return false, fmt.Errorf("%s is a folder; a report writes a file there: move it, or write the report elsewhere", filepath.Join(dir, n))
		case err == nil && st.Mode()&fs.ModeSymlink == 0 && regular.Kind(st.Mode()) != "":
			// --force replaces files; a FIFO or a device would be
			// swapped for the page, gone from the machine.
			return false, fmt.Errorf("%s is %s, not a file, which --force does not replace: move it, or write the report elsewhere", filepath.Join(dir, n), regular.Kind(st.Mode()))
		case err == nil:
			clash = append(clash, n)
		case !errors.Is(err, fs.ErrNotExist):
			return false, fmt.Errorf("cannot check %s: %w", filepath.Join(dir, n), unwrapPath(err))
		}
	}
	if len(clash) > 0 && !overwrite {
		return false, &ExistsError{Dir: dir, Names: clash}
	}
	if other := otherReport(dir, list); len(other) > 0 && !overwrite {
		return false, &MixError{Dir: dir, Names: other}
	}
	return true, nil
}

// CheckNames makes the refusals WriteDir or WriteSet would make to write
// files named names into dir (dir a file, a name a folder there, without
// overwrite a name there already or another kind of report), without
// writing anything, so that a caller can refuse before it draws the files.
func CheckNames(dir string, names []string, overwrite bool) error {
	list := append([]string(nil), names...)
	sort.Strings(list)
	_, err := refusal(filepath.Clean(dir), list, overwrite)
	return err
}

// entryPages are the pages each kind of report opens with: a capture's,
// the index of several, an audit's, the ranks' of a job.
var entryPages = []string{HTMLFile, MarkdownFile, IndexHTMLFile, IndexMarkdownFile, AuditHTMLFile, AuditMarkdownFile, RanksHTMLFile, RanksMarkdownFile}

// otherReport lists the entry pages of another report that dir holds: the
// pages of a kind of report the files (list) are not.
func otherReport(dir string, list []string) []string {
	ours := map[string]bool{}
	for _, n := range list {
		ours[n] = true
	}
	var out []string
	for _, p := range entryPages {
		if ours[p] {
			continue
		}
		if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// MixError refuses a report into a folder holding another report's pages
// (a capture's report where an index of several lies, say): the two would
// read as one.
type MixError struct {
	Dir   string
	Names []string
}

func (e *MixError) Error() string {
	return fmt.Sprintf("%s holds another report (%s): one written beside it would read as part of it; write it to another folder, or use --force to write it there anyway",
		e.Dir, strings.Join(e.Names, ", "))
}

// writeOne creates path (never following a link) and writes data to it.
func writeOne(path string, data []byte) error {
	f, err := createFile(path)
	if err != nil {
		return unwrapPath(err)
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr != nil {
		return unwrapPath(werr)
	}
	if cerr != nil {
		return unwrapPath(cerr)
	}
	return nil
}

// unwrapPath drops the path an *fs.PathError repeats, so that a message
// names its file once.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// CleanFile returns a report file's bytes as they are written to disk:
// every text file (Markdown, JSON, text, HTML, SVG) has its control
// characters escaped (ctlchar), so that a terminal escape in a capture's
// names cannot act on whoever prints the file, and the plain-text ones
// (Markdown, JSON, text) have their credentials masked
// (privacy.MaskSecrets). HTML and SVG are markup whose attributes and
// scripts can read like NAME=VALUE pairs, so they are not masked: their
// text comes from the same capture, whose strings check.Load has already
// masked. Images are written as they are.
func CleanFile(name string, data []byte) []byte {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".md", ".json", ".txt":
		return []byte(ctlchar.Escape(privacy.MaskSecrets(string(data))))
	case ".html", ".svg":
		return []byte(ctlchar.Escape(string(data)))
	}
	return data
}

// sweepStale removes the temporary folders of report writers that are no
// longer running (a run killed mid-write), or older than a day.
func sweepStale(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), tmpPrefix) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		if leftover.OwnerGone(e.Name()[len(tmpPrefix):], info.ModTime()) {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// onlyReportFiles reports whether dir holds nothing but plain files named
// in list: a report written before, or nothing at all. Only such a
// folder, not a link to one, is swapped whole.
func onlyReportFiles(dir string, list []string) bool {
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		return false
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	ours := map[string]bool{}
	for _, n := range list {
		ours[n] = true
	}
	for _, e := range entries {
		// A live writer's temporary folder stays where it is.
		if !ours[e.Name()] || !e.Type().IsRegular() && e.Type()&fs.ModeSymlink == 0 {
			return false
		}
	}
	return true
}

// dirWritable reports whether a temporary folder can be made in dir.
func dirWritable(dir string) bool {
	return unix.Access(dir, unix.W_OK|unix.X_OK) == nil
}
