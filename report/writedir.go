package report

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/internal/ctlchar"
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

// PlaceHook, when not nil, is called once every file is written into the
// temporary folder, before it is moved into place; tests use it to send a
// signal at a known point.
var PlaceHook func(dir string)

// writeFiles writes files into dir so that no reader ever sees a partial
// report and nothing is written through a link:
//
//   - every file is written into a fresh private temporary folder first;
//     a failure (a full disk, a signal) removes it and leaves dir as it was;
//   - a dir that does not exist yet is that folder, renamed into place
//     whole; a dir that holds nothing but files of this report (a report
//     written before, or an empty folder) is swapped with it in one
//     atomic exchange (renameat2 RENAME_EXCHANGE), and the old files,
//     now in the temporary folder, are removed; so a run killed at any
//     point leaves dir either as it was or whole, and a rerun needs no
//     --force that the first run did not;
//   - a dir that holds other files too (the user's, another report's) is
//     not swapped: each file is renamed into it in turn, which replaces a
//     link planted there instead of writing through it. A run killed
//     between two of these renames leaves some files new and some as they
//     were (the report's own files, never a partial one); the rerun needs
//     --force, as any report over an earlier one does;
//   - without overwrite, a name that exists in dir already (a link
//     included) is refused before anything is written;
//   - temporary folders that killed runs left behind are removed first.
//
// Every file passes through CleanFile on the way (credentials masked,
// control characters escaped).
func writeFiles(dir string, files map[string][]byte, overwrite bool) ([]string, error) {
	list := names(files)
	parent := filepath.Dir(filepath.Clean(dir))
	exists, err := checkOutputDir(dir, parent, list, overwrite)
	if err != nil {
		return nil, err
	}
	swap := exists && onlyReportFiles(dir, list) && dirWritable(parent)
	where := dir
	if !exists || swap {
		where = parent
	}
	tmp, err := os.MkdirTemp(where, tmpPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, fmt.Errorf("cannot write in %s: %w", where, unwrapPath(err))
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	for _, n := range list {
		if err := writeOne(filepath.Join(tmp, n), CleanFile(n, files[n])); err != nil {
			return nil, fmt.Errorf("write %s: %w (nothing was written to %s)", filepath.Join(dir, n), err, dir)
		}
	}
	var paths []string
	for _, n := range list {
		paths = append(paths, filepath.Join(dir, n))
	}
	if PlaceHook != nil {
		PlaceHook(dir)
	}
	placed, moved, err := placeFiles(tmp, dir, list, paths, exists, swap)
	done = moved
	return placed, err
}

// checkOutputDir looks at dir before anything is written: it must be a
// folder or absent (then its parent is created), and without overwrite none
// of the names in list may exist in it already. It removes the temporary
// folders that killed runs left in parent and dir, and says whether dir
// exists.
func checkOutputDir(dir, parent string, list []string, overwrite bool) (bool, error) {
	st, err := os.Stat(dir)
	exists := err == nil
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return false, fmt.Errorf("cannot use %s as the output folder: %w", dir, unwrapPath(err))
	case exists && !st.IsDir():
		return false, fmt.Errorf("%s is a file, not a folder: give a folder for the reports", dir)
	case !exists:
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return false, fmt.Errorf("cannot create %s: %w", parent, unwrapPath(err))
		}
	}
	sweepStale(parent)
	if exists {
		sweepStale(dir)
		if !overwrite {
			var clash []string
			for _, n := range list {
				if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
					clash = append(clash, n)
				} else if !errors.Is(err, fs.ErrNotExist) {
					return false, fmt.Errorf("cannot check %s: %w", filepath.Join(dir, n), unwrapPath(err))
				}
			}
			if len(clash) > 0 {
				return false, &ExistsError{Dir: dir, Names: clash}
			}
		}
	}
	return exists, nil
}

// placeFiles puts the files written in tmp into dir and returns the paths
// placed: a dir that did not exist is tmp renamed; a dir holding only an
// earlier report (swap) is exchanged with tmp in one step, so tmp then holds
// the old files; otherwise, or where the file system cannot exchange, each
// file is renamed into dir in turn. moved says tmp itself became dir, so
// there is no temporary folder left to remove.
func placeFiles(tmp, dir string, list, paths []string, exists, swap bool) (placed []string, moved bool, err error) {
	if !exists {
		if err := os.Chmod(tmp, 0o755); err != nil {
			return nil, false, fmt.Errorf("write %s: %w", dir, unwrapPath(err))
		}
		if err := os.Rename(tmp, dir); err != nil {
			return nil, false, fmt.Errorf("cannot move the report into %s: %w (nothing was written)", dir, unwrapPath(err))
		}
		return paths, true, nil
	}
	if swap {
		if st, err := os.Stat(dir); err == nil {
			_ = os.Chmod(tmp, st.Mode().Perm())
		}
		err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, dir, unix.RENAME_EXCHANGE)
		if err == nil {
			// tmp now holds the files dir held; writeFiles removes them.
			return paths, false, nil
		}
		// A file system without the exchange: rename file by file below.
		// Files written in the parent's temporary folder rename into dir
		// just as well.
	}
	for i, n := range list {
		if err := os.Rename(filepath.Join(tmp, n), paths[i]); err != nil {
			return paths[:i], false, fmt.Errorf("cannot move %s into place: %w", paths[i], unwrapPath(err))
		}
	}
	return paths, false, nil
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
		if capture.TempOwnerGone(e.Name()[len(tmpPrefix):], info.ModTime()) {
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
