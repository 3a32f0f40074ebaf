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

	"github.com/nsyscheck/nsyscheck/capture"
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

// writeFiles writes files into dir so that no reader ever sees a partial
// report and nothing is written through a link:
//
//   - every file is written into a fresh private temporary folder first;
//     a failure (a full disk, a signal) removes it and leaves dir as it was;
//   - a dir that does not exist yet is that folder, renamed into place
//     whole; otherwise each file is renamed into dir, which replaces a
//     link planted there instead of writing through it;
//   - without overwrite, a name that exists in dir already (a link
//     included) is refused before anything is written;
//   - temporary folders that killed runs left behind are removed first.
//
// Markdown, JSON and text files are passed through privacy.MaskSecrets on
// the way (maskText).
func writeFiles(dir string, files map[string][]byte, overwrite bool) ([]string, error) {
	list := names(files)
	parent := filepath.Dir(filepath.Clean(dir))
	st, err := os.Stat(dir)
	exists := err == nil
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("cannot use %s as the output folder: %w", dir, unwrapPath(err))
	case exists && !st.IsDir():
		return nil, fmt.Errorf("%s is a file, not a folder: give a folder for the reports", dir)
	case !exists:
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return nil, fmt.Errorf("cannot create %s: %w", parent, unwrapPath(err))
		}
	}
	if exists {
		sweepStale(dir)
		if !overwrite {
			var clash []string
			for _, n := range list {
				if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
					clash = append(clash, n)
				} else if !errors.Is(err, fs.ErrNotExist) {
					return nil, fmt.Errorf("cannot check %s: %w", filepath.Join(dir, n), unwrapPath(err))
				}
			}
			if len(clash) > 0 {
				return nil, &ExistsError{Dir: dir, Names: clash}
			}
		}
	} else {
		sweepStale(parent)
	}
	where := dir
	if !exists {
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
		if err := writeOne(filepath.Join(tmp, n), maskText(n, files[n])); err != nil {
			return nil, fmt.Errorf("write %s: %w (nothing was written to %s)", filepath.Join(dir, n), err, dir)
		}
	}
	var paths []string
	for _, n := range list {
		paths = append(paths, filepath.Join(dir, n))
	}
	if !exists {
		if err := os.Chmod(tmp, 0o755); err != nil {
			return nil, fmt.Errorf("write %s: %w", dir, unwrapPath(err))
		}
		if err := os.Rename(tmp, dir); err != nil {
			return nil, fmt.Errorf("cannot move the report into %s: %w (nothing was written)", dir, unwrapPath(err))
		}
		done = true
		return paths, nil
	}
	for i, n := range list {
		if err := os.Rename(filepath.Join(tmp, n), paths[i]); err != nil {
			return paths[:i], fmt.Errorf("cannot move %s into place: %w", paths[i], unwrapPath(err))
		}
	}
	return paths, nil
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

// maskText masks credentials in the plain-text files of a report (Markdown,
// JSON, text). HTML and SVG are markup whose attributes and scripts can read
// like NAME=VALUE pairs, so they are left as rendered: their text comes from
// the same capture, whose strings check.Load has already masked.
func maskText(name string, data []byte) []byte {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".md", ".json", ".txt":
		return []byte(privacy.MaskSecrets(string(data)))
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
