package capture

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/nsys"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

// nsysInstallHint tells the user how to get a usable nsys.
const nsysInstallHint = "install Nsight Systems 2025.3 or newer, pass --nsys PATH, " +
	"or give the report's SQLite export instead (nsys export --type sqlite -o FILE.sqlite REPORT.nsys-rep)"

// FindNsys returns the nsys executable to use (nsys.Find): override when
// given, else $NSYS, else nsys on PATH, else the newest one under
// /opt/nvidia. Not finding one is an *InputError.
func FindNsys(override string) (string, error) {
	p, err := nsys.Find(override)
	if err != nil {
		var fe *nsys.FindError
		if errors.As(err, &fe) {
			return "", &InputError{Path: fe.Name, Problem: fe.Problem, Err: fe.Err, Hint: nsysInstallHint}
		}
		return "", err
	}
	return p, nil
}

// ExportSuffix ends the name of the SQLite export nsyscheck makes of a
// .nsys-rep (NAME.nsyscheck.sqlite beside NAME.nsys-rep).
const ExportSuffix = ".nsyscheck.sqlite"

// LoadNsysRep reads an Nsight Systems report (.nsys-rep) by exporting it to
// SQLite with nsys and loading the export. The export is cached beside the
// report as <name>.nsyscheck.sqlite (or under opts.CacheDir, or the user's
// cache folder when the report's folder is read-only) and reused while it is
// newer than the report. A plain export beside the report (<name>.sqlite,
// what nsys export writes by default) is read instead when the export says
// it was made from a report of this name: then nsys is not needed. The
// report itself is never modified.
func LoadNsysRep(path string, opts Options) (*Capture, error) {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, &InputError{Path: path, Problem: "no such file"}
	case err != nil:
		return nil, &InputError{Path: path, Problem: "cannot read the report", Err: err}
	case info.IsDir():
		return nil, &InputError{Path: path, Problem: "is a folder, not an Nsight Systems report", Hint: "give the .nsys-rep file itself"}
	case info.Size() == 0:
		return nil, &InputError{Path: path, Problem: "the file is empty, not an Nsight Systems report",
			Hint: "profile again: nsys profile -t cuda,nvtx -o NAME ./program"}
	}
	head, err := readHead(path, 64)
	if err != nil {
		return nil, &InputError{Path: path, Problem: "cannot read the report", Err: err}
	}
	if bytes.HasPrefix(head, []byte(sqliteMagic)) {
		// Already an SQLite export, only named like a report.
		return LoadSQLite(path, opts)
	}
	if len(bytes.Trim(head, "\x00")) == 0 {
		return nil, &InputError{Path: path, Problem: "the file holds only zero bytes, not an Nsight Systems report (an interrupted copy?)",
			Hint: "copy the report again, or profile again: nsys profile -t cuda,nvtx -o NAME ./program"}
	}

	if sib := siblingExport(path); sib != "" {
		if c, err := LoadSQLite(sib, opts); err == nil {
			c.Format = FormatNsysRep
			c.Path = path
			c.Files = []string{path, sib}
			return c, nil
		}
		// An unreadable sibling: export the report as if it were not there.
	}

	dir, name, err := exportCachePath(path, info, opts)
	if err != nil {
		return nil, err
	}
	cached := filepath.Join(dir, name)
	finish := func(c *Capture) *Capture {
		c.Format = FormatNsysRep
		c.Path = path
		c.Files = []string{path, cached}
		return c
	}
	if ci, err := os.Stat(cached); err == nil && ci.Mode().IsRegular() && ci.ModTime().After(info.ModTime()) {
		if c, err := LoadSQLite(cached, opts); err == nil {
			return finish(c), nil
		}
		// A damaged or foreign cache file: export again over it.
	}

	nsysPath, err := FindNsys(opts.Nsys)
	if err != nil {
		var ie *InputError
		if errors.As(err, &ie) {
			return nil, &InputError{Path: path, Problem: "cannot export the report to SQLite: " + ie.Problem,
				Err: ie.Err, Hint: ie.Hint}
		}
		return nil, err
	}
	if err := exportSQLite(nsysPath, path, head, dir, cached); err != nil {
		return nil, err
	}
	c, err := LoadSQLite(cached, opts)
	if err != nil {
		return nil, err
	}
	return finish(c), nil
}

// siblingExport returns the plain SQLite export beside a report
// (<name>.sqlite) when its META_DATA_EXPORT says it was exported from a file
// of the report's name, or "".
func siblingExport(report string) string {
	base := strings.TrimSuffix(filepath.Base(report), filepath.Ext(report))
	sib := filepath.Join(filepath.Dir(report), base+".sqlite")
	if st, err := os.Stat(sib); err != nil || !st.Mode().IsRegular() || checkSQLiteFile(sib) != nil {
		return ""
	}
	db, err := sql.Open("sqlite3", sqliteReadOnlyDSN(sib))
	if err != nil {
		return ""
	}
	defer db.Close()
	var input string
	err = db.QueryRow(`SELECT value FROM `+tabMeta+` WHERE name = ?`, nsysdb.MetaInputFile).Scan(&input)
	if err != nil || filepath.Base(filepath.FromSlash(input)) != filepath.Base(report) {
		return ""
	}
	return sib
}

// readHead returns up to n bytes from the start of the file.
func readHead(path string, n int) ([]byte, error) { return nsysdb.Head(path, n) }

// exportCachePath chooses where the report's SQLite export lives: beside
// the report when its folder is writable, else (or when opts.CacheDir is
// set) in a cache folder, under a name keyed by the report's absolute path,
// size and modification time.
func exportCachePath(report string, info os.FileInfo, opts Options) (dir, name string, err error) {
	base := strings.TrimSuffix(filepath.Base(report), filepath.Ext(report))
	if opts.CacheDir == "" {
		dir = filepath.Dir(report)
		if dirWritable(dir) {
			return dir, base + ExportSuffix, nil
		}
	}
	dir = opts.CacheDir
	if dir == "" {
		ucd, err := os.UserCacheDir()
		if err != nil {
			ucd = os.TempDir()
		}
		dir = filepath.Join(ucd, "nsyscheck")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", &InputError{Path: report, Problem: "cannot create the export cache folder " + dir, Err: err,
			Hint: "pass a writable cache folder, or give the report's SQLite export instead"}
	}
	abs, err := filepath.Abs(report)
	if err != nil {
		abs = report
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%d", abs, info.Size(), info.ModTime().UnixNano())))
	return dir, base + "-" + hex.EncodeToString(sum[:8]) + ".sqlite", nil
}

// dirWritable reports whether files can be created in dir. A folder with no
// write permission bits counts as read-only even for a user (root) who could
// write there anyway: its owner asked for it to be left alone.
func dirWritable(dir string) bool {
	info, err := os.Stat(dir)
	if err != nil || !info.IsDir() || info.Mode().Perm()&0o222 == 0 {
		return false
	}
	f, err := os.CreateTemp(dir, ".nsyscheck-probe-*")
	if err != nil {
		return false
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	return true
}

// exportSQLite runs nsys export into a temporary file in dir and renames it
// to dst once it is a complete SQLite database.
func exportSQLite(nsysPath, report string, head []byte, dir, dst string) error {
	f, err := os.CreateTemp(dir, "."+filepath.Base(dst)+".tmp-*.sqlite")
	if err != nil {
		return &InputError{Path: report, Problem: "cannot write the SQLite export in " + dir, Err: err,
			Hint: "pass a writable cache folder, or give the report's SQLite export instead"}
	}
	tmp := f.Name()
	f.Close()
	os.Remove(tmp) // let nsys create it
	defer os.Remove(tmp)
	defer os.Remove(tmp + ".sqlite")

	arg := report
	if strings.HasPrefix(arg, "-") {
		arg = "./" + arg // a file name, never an option of nsys
	}
	cmd := nsys.Command(context.Background(), "", nil, nsysPath, "export", "--type", "sqlite", "--force-overwrite", "true", "--output", tmp, arg)
	out, runErr := nsys.CombinedOutput(cmd)
	if runErr != nil {
		return nsysExportError(nsysPath, report, head, out, runErr)
	}
	got := tmp
	if _, err := os.Stat(got); err != nil {
		// Some releases append .sqlite to the name they are given.
		got = tmp + ".sqlite"
		if _, err := os.Stat(got); err != nil {
			return &InputError{Path: report, Problem: fmt.Sprintf("%s export finished but wrote no SQLite file", nsysPath),
				Err: outputError(out), Hint: nsysInstallHint}
		}
	}
	if err := checkSQLiteFile(got); err != nil {
		var ie *InputError
		if errors.As(err, &ie) {
			err = errors.New(ie.Problem)
		}
		return &InputError{Path: report, Problem: fmt.Sprintf("%s export wrote a damaged SQLite file", nsysPath),
			Err: err, Hint: nsysInstallHint}
	}
	if err := os.Rename(got, dst); err != nil {
		return &InputError{Path: report, Problem: "cannot store the SQLite export as " + dst, Err: err}
	}
	return nil
}

// outputError turns nsys's output into an error, keeping its last lines.
func outputError(out []byte) error {
	s := strings.TrimSpace(string(out))
	if s == "" {
		return nil
	}
	const maxOut = 2000
	if len(s) > maxOut {
		s = "..." + s[len(s)-maxOut:]
	}
	return errors.New(s)
}

// nsysExportError explains a failed nsys export.
func nsysExportError(nsysPath, report string, head, out []byte, runErr error) error {
	var exit *exec.ExitError
	if !errors.As(runErr, &exit) {
		return &InputError{Path: report, Problem: "cannot run " + nsysPath, Err: runErr, Hint: nsysInstallHint}
	}
	cause := outputError(out)
	if cause == nil {
		cause = runErr
	}
	lower := strings.ToLower(string(out))
	if strings.Contains(lower, "version not supported") || strings.Contains(lower, "unsupported version") ||
		strings.Contains(lower, "version is not supported") {
		version := nsys.Version(context.Background(), nsysPath)
		hint := "install Nsight Systems 2025.3 or newer and pass --nsys PATH, " +
			"or export the report where it was made (nsys export --type sqlite -o FILE.sqlite REPORT.nsys-rep) and give the .sqlite"
		for _, other := range nsys.Installed() {
			if other != nsysPath {
				hint = "try --nsys " + other + ", or " + hint
				break
			}
		}
		return &InputError{Path: report,
			Problem: fmt.Sprintf("this nsys (%s%s) is too old to read the report, which a newer Nsight Systems wrote", nsysPath, version),
			Err:     cause, Hint: hint}
	}
	problem := fmt.Sprintf("%s export failed (%v)", nsysPath, runErr)
	if nsysdb.Magic(head) != nsysdb.KindNsysRep {
		problem += "; the file does not start like an Nsight Systems report"
	}
	return &InputError{Path: report, Problem: problem, Err: cause,
		Hint: "check that the file is a complete .nsys-rep, or give its SQLite export instead"}
}
