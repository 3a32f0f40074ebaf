// Package exportcache turns an Nsight Systems report (.nsys-rep) into the
// SQLite export the readers read, one way for every command: the current
// export beside the report, else nsyscheck's own export keyed by the
// report's size and SHA-256, else a new one made with nsys (stopped with
// its process group when the context is cancelled), else the older export
// beside it when nsys is missing or too old, with a note saying so.
package exportcache

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/environ"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/leftover"
	"github.com/nsyscheck/nsyscheck/internal/nsys"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/internal/sqlitefile"
)

// nsysInstallHint tells the user how to get a usable nsys.
const nsysInstallHint = "install Nsight Systems 2025.3 or newer, pass --nsys PATH, " +
	"or give the report's SQLite export instead (nsys export --type sqlite -o FILE.sqlite REPORT.nsys-rep)"

// FindNsys returns the nsys executable to use (nsys.FindIn): override when
// given, else env's $NSYS, else nsys on env's PATH, else the newest one
// under /opt/nvidia (env nil: the process's environment). Not finding one
// is an *inputerr.Error.
func FindNsys(override string, env environ.Env) (string, error) {
	p, err := nsys.FindIn(override, env)
	if err != nil {
		var fe *nsys.FindError
		if errors.As(err, &fe) {
			return "", &inputerr.Error{Path: fe.Name, Problem: fe.Problem, Err: fe.Err, Hint: nsysInstallHint}
		}
		return "", err
	}
	return p, nil
}

// Suffix ends the name of the SQLite export nsyscheck makes of a .nsys-rep
// (NAME.nsyscheck.sqlite beside NAME.nsys-rep).
const Suffix = ".nsyscheck.sqlite"

// Options say where nsys and the cache are.
type Options struct {
	// Nsys is the nsys executable that exports a report; empty means look
	// it up ($NSYS, PATH, the usual install folders).
	Nsys string
	// CacheDir, when set, receives exports instead of the folder beside the
	// report.
	CacheDir string
	// Env is the environment NSYS, PATH and the user's cache folder are
	// read from (nil: the process's).
	Env environ.Env
}

// Report is the .nsys-rep to resolve, open as the caller opened it.
type Report struct {
	Path string
	File io.ReaderAt // the report's bytes, read once to identify it
	Info os.FileInfo
	// Magic says the file starts as an Nsight Systems report does; an
	// export nsys refuses is then not blamed on the file's kind.
	Magic bool
}

// Resolve finds or makes the SQLite export to read for the report, the one
// way every reader of a .nsys-rep does: it returns the export's path, once
// accept (the caller's opening of it) has taken it, whether it is
// nsyscheck's own export (which holds nothing the report does not), and a
// note when the export is the one beside the report (what check reports as
// input-substituted). In order:
//
//   - the export beside the report (exportBeside) when it is not older;
//   - nsyscheck's export, keyed by the report's size and SHA-256;
//   - a new export made with nsys (stopped when ctx is cancelled);
//   - the export beside the report even when older, as the last resort
//     when no nsys was found (none named) or the one found is too old.
//
// A candidate accept rejects is passed over, except the new export, whose
// error is returned. Each candidate is opened once, by accept: what tells
// whether it is the export of this report (the export beside it naming
// it, nsyscheck's own recording its size and digest) is asked of the
// database accept opened.
func Resolve(ctx context.Context, rep Report, opts Options, accept Accept) (db string, own bool, note string, err error) {
	path, info, open := rep.Path, rep.Info, accept
	// The export beside the report wins over exporting it again, even where
	// nsys is installed and works: its export record names this report and it
	// is newer, so nsys would write the same tables from the same file (the
	// rule nsys stats applies to NAME.sqlite unless told --force-export).
	// Reading it costs no nsys start-up or export time and no second copy on
	// disk, and the verdicts of a shared capture folder do not depend on the
	// machine having nsys. An export older than the report may be of an
	// earlier run written under the same name: it is kept only as the last
	// resort below.
	beside, fresh := exportBeside(path, info)
	names := namesReport(path)
	if beside != "" && fresh && open(beside, names) == nil {
		return beside, false, besideNote(path, beside, ""), nil
	}
	// (An unreadable export beside, or one of another report: export the
	// report as if it were not there.)
	lastResort := func(why string) (string, string, bool) {
		if beside == "" || open(beside, names) != nil {
			return "", "", false
		}
		return beside, besideNote(path, beside, why), true
	}

	src, err := digestReport(rep)
	if err != nil {
		return "", false, "", err
	}
	dir, name, err := exportCachePath(path, src, opts)
	if err != nil {
		return "", false, "", err
	}
	cached := filepath.Join(dir, name)
	sweepExportTemps(dir, name)
	if ci, err := os.Lstat(cached); err == nil && ci.Mode().IsRegular() {
		if open(cached, recordsSource(src)) == nil {
			return cached, true, "", nil
		}
		// A damaged or foreign cache file, or one of another report: export
		// again over it.
	}

	nsysPath, err := FindNsys(opts.Nsys, opts.Env)
	if err != nil {
		var ie *inputerr.Error
		if errors.As(err, &ie) {
			err = &inputerr.Error{Path: path, Problem: "cannot export the report to SQLite: " + ie.Problem,
				Err: ie.Err, Hint: ie.Hint}
		}
		// Only a missing nsys, not one the user named, sends us to the
		// export beside the report.
		if opts.Nsys == "" && opts.Env.Get("NSYS") == "" {
			if db, note, ok := lastResort("no nsys was found to export it"); ok {
				return db, false, note, nil
			}
		}
		if !rep.Magic {
			// Without nsys to try it, the file's first bytes are all there
			// is to tell: say what they are not, before what is missing.
			return "", false, "", &inputerr.Error{Path: path,
				Problem: "is not an Nsight Systems report: it does not start as one does, and no nsys was found to try exporting it",
				Hint:    "check the path and that the copy is complete, as a report starts with the bytes \"" + nsysdb.NsysRepMagic + "\", or give its SQLite export"}
		}
		return "", false, "", err
	}
	if err := exportSQLite(ctx, nsysPath, rep, dir, cached, src); err != nil {
		var old *nsysTooOldError
		if errors.As(err, &old) {
			why := "the nsys found is too old to export it"
			if old.version != "" {
				why = fmt.Sprintf("the nsys found (%s) is too old to export it", strings.TrimPrefix(old.version, ", "))
			}
			if db, note, ok := lastResort(why); ok {
				return db, false, note, nil
			}
		}
		return "", false, "", err
	}
	if err := open(cached, nil); err != nil {
		return "", false, "", err
	}
	return cached, true, "", nil
}

// Accept opens a candidate export at db for the caller, which keeps it
// once it is taken: it refuses a file that is no readable SQLite export,
// and one whose database is (check not nil) refused by check.
type Accept func(db string, check func(*sqlitefile.DB) error) error

// exportBeside returns the SQLite export beside the report, if there is a
// regular file of its name (NAME.sqlite for NAME.nsys-rep); "" when there
// is none. fresh says the export is not older than the report. Whether it
// is this report's export namesReport tells, once it is open.
func exportBeside(report string, info os.FileInfo) (path string, fresh bool) {
	base := strings.TrimSuffix(filepath.Base(report), filepath.Ext(report))
	sib := filepath.Join(filepath.Dir(report), base+".sqlite")
	st, err := os.Stat(sib)
	if err != nil || !st.Mode().IsRegular() {
		return "", false
	}
	return sib, !st.ModTime().Before(info.ModTime())
}

// namesReport accepts the export beside a report when its export record
// (EXPORT_PARAM_INPUT_FILE) names a report of this name, so that an export
// of another report is never taken for this one.
func namesReport(report string) func(*sqlitefile.DB) error {
	return func(db *sqlitefile.DB) error {
		var input string
		err := db.QueryRow(`SELECT `+nsysdb.QuoteIdent(nsysdb.ColValue)+` FROM `+nsysdb.QuoteIdent(nsysdb.TableMetaExport)+
			` WHERE `+nsysdb.QuoteIdent(nsysdb.ColName)+` = ?`, nsysdb.MetaInputFile).Scan(&input)
		if err != nil {
			return err
		}
		if filepath.Base(filepath.FromSlash(input)) != filepath.Base(report) {
			return fmt.Errorf("the export of %s, not of %s", input, filepath.Base(report))
		}
		return nil
	}
}

// besideNote says that beside, the export exportBeside found, was read in
// place of the report: why says what kept nsys from exporting the report
// ("" when the export was read because it is current).
func besideNote(report, beside, why string) string {
	name := filepath.Base(beside)
	if why == "" {
		return fmt.Sprintf("read %s, the SQLite export made from this report, instead of exporting the report again with nsys", name)
	}
	note := fmt.Sprintf("read %s, the SQLite export beside the report, because %s", name, why)
	if ri, err := os.Stat(report); err == nil {
		if bi, err := os.Stat(beside); err == nil && bi.ModTime().Before(ri.ModTime()) {
			note += "; the export is older than the report, so it may be of an earlier run under the same name"
		}
	}
	return note
}

// nsysTooOldError is nsys refusing a report that a newer release wrote.
type nsysTooOldError struct {
	err     *inputerr.Error
	version string // ", version X" or ""
}

func (e *nsysTooOldError) Error() string { return e.err.Error() }

func (e *nsysTooOldError) Unwrap() error { return e.err }

// exportCachePath chooses where the report's SQLite export lives: beside
// the report when its folder is writable, else (or when opts.CacheDir is
// set) in a cache folder, under a name keyed by the report's content.
func exportCachePath(report string, src reportSource, opts Options) (dir, name string, err error) {
	base := strings.TrimSuffix(filepath.Base(report), filepath.Ext(report))
	if opts.CacheDir == "" {
		dir = filepath.Dir(report)
		if dirWritable(dir) {
			return dir, base + Suffix, nil
		}
	}
	dir = opts.CacheDir
	if dir == "" {
		ucd, err := opts.Env.UserCacheDir()
		if err != nil {
			ucd = os.TempDir()
		}
		dir = filepath.Join(ucd, "nsyscheck")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", &inputerr.Error{Path: report, Problem: "cannot create the export cache folder " + dir, Err: err,
			Hint: "pass a writable cache folder, or give the report's SQLite export instead"}
	}
	return dir, base + "-" + src.sha256[:16] + ".sqlite", nil
}

// reportSource identifies a report by content: its size and SHA-256.
type reportSource struct {
	size   int64
	sha256 string // hex
}

// digestReport reads the report once to identify it.
func digestReport(rep Report) (reportSource, error) {
	h := sha256.New()
	n, err := io.Copy(h, io.NewSectionReader(rep.File, 0, rep.Info.Size()))
	if err != nil {
		return reportSource{}, &inputerr.Error{Path: rep.Path, Problem: "cannot read the report", Err: err}
	}
	return reportSource{size: n, sha256: hex.EncodeToString(h.Sum(nil))}, nil
}

// sourceTable is the table nsyscheck adds to its own exports to record the
// report they were made from.
const sourceTable = "NSYSCHECK_SOURCE"

// recordsSource accepts nsyscheck's export of a report when it records
// src as the report it was made from (a foreign or damaged file records
// none).
func recordsSource(src reportSource) func(*sqlitefile.DB) error {
	return func(db *sqlitefile.DB) error {
		var got reportSource
		if err := db.QueryRow(`SELECT size, sha256 FROM `+sourceTable).Scan(&got.size, &got.sha256); err != nil {
			return err
		}
		if got != src {
			return errors.New("the export of another report")
		}
		return nil
	}
}

// recordSource writes src into the export at path.
func recordSource(path string, src reportSource) error {
	db, err := sql.Open("sqlite3", nsysdb.URI(path, "mode=rw"))
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.Exec(`CREATE TABLE `+sourceTable+` (size INTEGER NOT NULL, sha256 TEXT NOT NULL);
		INSERT INTO `+sourceTable+` VALUES (?, ?)`, src.size, src.sha256)
	if err != nil {
		return err
	}
	return db.Close()
}

// exportTempPrefix starts the name of an export being written as dst:
// ".<dst>.tmp-<pid>-", so that a later run can tell a killed run's leftover.
func exportTempPrefix(dst string) string {
	return "." + filepath.Base(dst) + ".tmp-"
}

// sweepExportTemps removes, in dir, the temporary exports of name that runs
// no longer alive left behind.
func sweepExportTemps(dir, name string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := exportTempPrefix(name)
	for _, e := range entries {
		if e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		if leftover.OwnerGone(e.Name()[len(prefix):], info.ModTime()) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
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
// to dst once it is a complete SQLite database that records src. nsys runs
// in a process group of its own, stopped whole when ctx is cancelled.
func exportSQLite(ctx context.Context, nsysPath string, rep Report, dir, dst string, src reportSource) error {
	report := rep.Path
	f, err := os.CreateTemp(dir, exportTempPrefix(dst)+strconv.Itoa(os.Getpid())+"-*.sqlite")
	if err != nil {
		return &inputerr.Error{Path: report, Problem: "cannot write the SQLite export in " + dir, Err: err,
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
	// A stopped export is removed: nothing of it is worth waiting for.
	cmd := nsys.KillOnCancel(nsys.Command(ctx, "", nil, nsysPath, "export", "--type", "sqlite", "--force-overwrite", "true", "--output", tmp, arg))
	out, runErr := nsys.CombinedOutput(cmd)
	interrupted := func() error {
		return &inputerr.Error{Path: report, Problem: "interrupted while nsys exported the report; nsys was stopped and its partial export removed",
			Err: context.Cause(ctx)}
	}
	if ctx.Err() != nil {
		return interrupted()
	}
	if runErr != nil {
		err := nsysExportError(ctx, nsysPath, rep, out, runErr)
		if ctx.Err() != nil {
			// Stopped while nsys was asked its version.
			return interrupted()
		}
		return err
	}
	got := tmp
	if _, err := os.Stat(got); err != nil {
		// Some releases append .sqlite to the name they are given.
		got = tmp + ".sqlite"
		if _, err := os.Stat(got); err != nil {
			return &inputerr.Error{Path: report, Problem: fmt.Sprintf("%s export finished but wrote no SQLite file", nsysPath),
				Err: outputError(out), Hint: nsysInstallHint}
		}
	}
	if err := sqlitefile.CheckPath(got); err != nil {
		var ie *inputerr.Error
		if errors.As(err, &ie) {
			err = errors.New(ie.Problem)
		}
		return &inputerr.Error{Path: report, Problem: fmt.Sprintf("%s export wrote a damaged SQLite file", nsysPath),
			Err: err, Hint: nsysInstallHint}
	}
	if err := recordSource(got, src); err != nil {
		return &inputerr.Error{Path: report, Problem: "cannot record the report's digest in its SQLite export", Err: err}
	}
	if err := os.Rename(got, dst); err != nil {
		return &inputerr.Error{Path: report, Problem: "cannot store the SQLite export as " + dst, Err: err}
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
func nsysExportError(ctx context.Context, nsysPath string, rep Report, out []byte, runErr error) error {
	report := rep.Path
	var exit *exec.ExitError
	if !errors.As(runErr, &exit) {
		return &inputerr.Error{Path: report, Problem: "cannot run " + nsysPath, Err: runErr, Hint: nsysInstallHint}
	}
	cause := outputError(out)
	if cause == nil {
		cause = runErr
	}
	lower := strings.ToLower(string(out))
	if strings.Contains(lower, "version not supported") || strings.Contains(lower, "unsupported version") ||
		strings.Contains(lower, "version is not supported") {
		version := nsys.Version(ctx, nsysPath)
		hint := "install Nsight Systems 2025.3 or newer and pass --nsys PATH, " +
			"or export the report where it was made (nsys export --type sqlite -o FILE.sqlite REPORT.nsys-rep) and give the .sqlite"
		for _, other := range nsys.Installed() {
			if other != nsysPath {
				hint = "try --nsys " + other + ", or " + hint
				break
			}
		}
		return &nsysTooOldError{version: version, err: &inputerr.Error{Path: report,
			Problem: fmt.Sprintf("this nsys (%s%s) is too old to read the report, which a newer Nsight Systems wrote", nsysPath, version),
			Err:     cause, Hint: hint}}
	}
	problem := fmt.Sprintf("%s export failed (%v)", nsysPath, runErr)
	if !rep.Magic {
		problem += "; the file does not start like an Nsight Systems report"
	}
	return &inputerr.Error{Path: report, Problem: problem, Err: cause,
		Hint: "check that the file is a complete .nsys-rep, or give its SQLite export instead"}
}
