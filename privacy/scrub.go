package privacy

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/nsyscheck/nsyscheck/internal/ctlchar"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/leftover"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/internal/regular"
	"github.com/nsyscheck/nsyscheck/internal/sqlitefile"
	"github.com/nsyscheck/nsyscheck/source"
)

// ScrubOptions tune Scrub.
type ScrubOptions struct {
	// Force lets Scrub replace an existing output file.
	Force bool
	// Keep names more environment variables to keep, in Allowlist syntax
	// (exact names or "PREFIX*"). Secret-looking names are never kept.
	Keep []string
	// DropNames removes variables outside the allowlist altogether. By
	// default their names stay and only their values become Redacted: which
	// variables were set (LD_PRELOAD, OMP_NUM_THREADS, ...) can matter when
	// reading a measurement, while the values are where secrets live.
	DropNames bool
	// Context stops the scrub when it is done (SIGINT, SIGTERM): Scrub
	// then removes its temporary files, leaves out as it was and returns
	// an error that wraps the context's (context.Canceled). nil: never.
	Context context.Context
}

// ScrubStepHook, when not nil, is called after each step of Scrub with the
// step's name ("copied", "scrubbed", "checked"), and as the scrubbed copy's
// check begins ("checking"); tests use it to interrupt a scrub at a known
// point.
var ScrubStepHook func(step string)

// Temporary files of a scrub carry the scrubbing process's id after these
// prefixes, so that a later scrub can tell a killed run's leftovers from a
// running one's (leftover.OwnerGone) and remove them.
const (
	scrubTmpDirPrefix = "nsyscheck-scrub-"
	scrubTmpOutInfix  = ".scrub-"
)

// interrupted is the error of a scrub stopped by its context.
func interrupted(ctx context.Context, in, out string) error {
	return &inputerr.Error{Path: in, Problem: "interrupted: the temporary copies were removed and " + out + " was not written",
		Err: ctx.Err(), Hint: "run scrub again"}
}

// sweepScrubTemps removes what killed scrubs left: working folders in the
// temporary folder and hidden copies beside out.
func sweepScrubTemps(out string) {
	sweep := func(dir, prefix string) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), prefix) {
				continue
			}
			info, err := e.Info()
			if err != nil {
				continue
			}
			rest := strings.TrimPrefix(e.Name(), prefix)
			if leftover.OwnerGone(rest, info.ModTime()) {
				os.RemoveAll(filepath.Join(dir, e.Name()))
			}
		}
	}
	sweep(os.TempDir(), scrubTmpDirPrefix)
	sweep(filepath.Dir(out), "."+filepath.Base(out)+scrubTmpOutInfix)
}

func scrubStep(step string) {
	if ScrubStepHook != nil {
		ScrubStepHook(step)
	}
}

const nsysRepScrubHint = "the report format cannot be rewritten; scrub its SQLite export instead: " +
	"nsys export --type sqlite -o FILE.sqlite REPORT.nsys-rep, then nsyscheck scrub FILE.sqlite"

// Scrub writes a shareable copy of the SQLite export in to out and returns
// what it found in in (and so removed). It never modifies in: it works on a
// private temporary copy, where it
//
//   - replaces the values of environment variables outside the allowlist
//     (TARGET_INFO_SYSTEM_ENV DeviceEnvironment, META_DATA_CAPTURE
//     PROCESS_n:ENVIRONMENT_VARIABLE rows, environment blocks in StringIds)
//     with Redacted, keeping the names unless opts.DropNames;
//   - deletes the rows of processes other than the profiled program and
//     nsys's own from PROCESSES and from every table keyed by globalPid or
//     globalTid (ThreadNames, ProcessStreams, ANALYSIS_FILE, ...), and their
//     thread names from StringIds where nothing else refers to them;
//   - replaces every credential-looking value Scan found, in any text
//     column, and a working folder under a user's home;
//   - drops the tables, views, indexes and triggers named with a
//     credential, renames the columns that are, and redacts a credential
//     elsewhere in a table's SQL, a DEFAULT clause or a comment (schemaNames);
//
// then writes the result with VACUUM INTO a temporary file beside out, which
// rebuilds every page so that no stale bytes survive, checks it with Scan,
// and renames it to out.
//
// Scrub refuses a .nsys-rep (the report format cannot be rewritten), out
// equal to in, and an existing out unless opts.Force.
func Scrub(in, out string, opts ScrubOptions) (*Report, error) {
	if out == "" {
		return nil, &inputerr.Error{Path: in, Problem: "no output file given", Hint: "name the shareable copy to write, e.g. capture.shared.sqlite"}
	}
	if err := notAFolder(in); err != nil {
		return nil, err
	}
	f, err := source.OpenFile(in)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := checkScrubPaths(f, out, opts); err != nil {
		return nil, err
	}
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	rep, err := Scan(ctx, f)
	if ctx.Err() != nil {
		return nil, interrupted(ctx, in, out)
	}
	if err != nil {
		return nil, err
	}
	if rep.Format != "sqlite" {
		return nil, &inputerr.Error{Path: in, Problem: "cannot scrub a " + rep.Format + " file", Hint: nsysRepScrubHint}
	}
	sweepScrubTemps(out)
	pid := strconv.Itoa(os.Getpid())

	tmpDir, work, err := workingCopy(f, pid)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmpDir)
	scrubStep("copied")
	if ctx.Err() != nil {
		return nil, interrupted(ctx, in, out)
	}

	tmpOut, err := scrubCopy(ctx, work, out, rep, opts)
	if ctx.Err() != nil {
		if tmpOut != "" {
			os.Remove(tmpOut)
		}
		return nil, interrupted(ctx, in, out)
	}
	if err != nil {
		return nil, &inputerr.Error{Path: in, Where: "working copy", Problem: "cannot scrub the export", Err: err,
			Hint: "check that the file is a complete nsys SQLite export and that " + filepath.Dir(out) + " is writable"}
	}
	keepTmp := false
	defer func() {
		if !keepTmp {
			os.Remove(tmpOut)
		}
	}()

	scrubStep("scrubbed")
	if ctx.Err() != nil {
		return nil, interrupted(ctx, in, out)
	}
	scrubStep("checking")
	after, err := ScanPath(ctx, tmpOut)
	// A scan stopped by the signal says nothing of the export: the scrub
	// was interrupted, its copy is removed, and in is as it was.
	if ctx.Err() != nil {
		return nil, interrupted(ctx, in, out)
	}
	if err != nil {
		return nil, err
	}
	scrubStep("checked")
	if !after.Clean() {
		return nil, survivorsError(in, after)
	}
	if err := placeScrubbed(tmpOut, out, opts.Force); err != nil {
		return nil, err
	}
	keepTmp = true
	return rep, nil
}

// workingCopy copies in, with what SQLite keeps beside it (a -wal, a hot
// -journal), into a new temporary folder named with the process id pid,
// and returns the folder and the copy's path; the caller removes the
// folder. Opening the copy applies the sidecars, so the copy is the
// committed state.
func workingCopy(f *source.File, pid string) (tmpDir, work string, err error) {
	in := f.Path
	tmpDir, err = os.MkdirTemp("", scrubTmpDirPrefix+pid+"-")
	if err != nil {
		return "", "", &inputerr.Error{Path: in, Problem: "cannot make a temporary folder for the working copy", Err: err,
			Hint: "check that $TMPDIR is writable"}
	}
	work = filepath.Join(tmpDir, "work.sqlite")
	copies := map[string]io.Reader{in: f.Reader()}
	sides := sqlitefile.Sidecars(in)
	for _, src := range append([]string{in}, sides...) {
		dst := work + strings.TrimPrefix(src, in)
		if err := copyFile(src, copies[src], dst); err != nil {
			os.RemoveAll(tmpDir)
			return "", "", &inputerr.Error{Path: in, Problem: "cannot copy " + filepath.Base(src) + " to " + dst, Err: err,
				Hint: "check the free space in the temporary folder"}
		}
	}
	return tmpDir, work, nil
}

// survivorsError is the refusal when the scan of the scrubbed copy still
// finds something: it names the first five findings left.
func survivorsError(in string, after *Report) error {
	var left []string
	for _, f := range after.Findings {
		left = append(left, fmt.Sprintf("%s %s in %s", f.Kind, f.Label(), f.Where))
		if len(left) == 5 {
			break
		}
	}
	return &inputerr.Error{Path: in, Where: "scrubbed copy",
		Problem: fmt.Sprintf("%d finding(s) survived scrubbing (%s), so nothing was written", len(after.Findings), strings.Join(left, "; ")),
		Hint:    "report this capture's nsys version; meanwhile share the program's results JSON instead"}
}

// placeScrubbed moves the checked copy tmpOut to out, refusing an out that
// exists (a link included) unless force.
func placeScrubbed(tmpOut, out string, force bool) error {
	if !force {
		if _, err := os.Lstat(out); err == nil {
			return existsError(out)
		}
	}
	if err := os.Rename(tmpOut, out); err != nil {
		return &inputerr.Error{Path: out, Problem: "cannot move the scrubbed copy into place", Err: err,
			Hint: "check that the folder is writable"}
	}
	return nil
}

// notAFolder refuses a folder given to scrub (of CSV reports, or a run's),
// naming the export in it to give instead: Scrub rewrites one SQLite file.
func notAFolder(in string) error {
	st, err := os.Stat(in)
	if err != nil || !st.IsDir() {
		return nil
	}
	hint := "give the capture's SQLite export (nsys export --type sqlite -o FILE.sqlite REPORT.nsys-rep), scrub it, and make CSV reports from the scrubbed copy (nsys stats --format csv)"
	if m, _ := filepath.Glob(filepath.Join(in, "*.sqlite")); len(m) == 1 {
		hint = "give the SQLite export in it, " + m[0] + ", and make CSV reports from the scrubbed copy where you need them (nsys stats --format csv)"
	}
	return &inputerr.Error{Path: in, Problem: "a folder: scrub writes a shareable copy of one SQLite export, and CSV reports cannot be scrubbed", Hint: hint}
}

func existsError(out string) error {
	if err := danglingOutput(out); err != nil {
		return err
	}
	return &inputerr.Error{Path: out, Problem: "the output file already exists",
		Hint: "choose another name, or use --force to replace it"}
}

// sidecarSuffixes name the files SQLite keeps beside a database: its
// write-ahead log, its rollback journal and the log's shared memory.
var sidecarSuffixes = []string{"-wal", "-journal", "-shm"}

// sidecarOutput refuses an output named as one of the input's SQLite
// sidecars (in-wal, in-journal, in-shm, in its folder): SQLite takes such
// a file for the input's own state, so opening the input would delete the
// copy, or, were it the input's real -wal replaced with --force, lose what
// the input holds there.
func sidecarOutput(in, out string) error {
	ib, ob := filepath.Base(in), filepath.Base(out)
	for _, suf := range sidecarSuffixes {
		if ob != ib+suf {
			continue
		}
		id, err1 := os.Stat(filepath.Dir(in))
		od, err2 := os.Stat(filepath.Dir(out))
		if err1 != nil || err2 != nil || !os.SameFile(id, od) {
			return nil
		}
		return &inputerr.Error{Path: out, Problem: fmt.Sprintf("the output is named as the input's SQLite %s file, which SQLite reads as part of %s: the next program to open the input would delete the copy, or take it for the input's own state; Scrub never modifies its input", suf, ib),
			Hint: "name the output otherwise, as " + strings.TrimSuffix(ib, filepath.Ext(ib)) + ".scrubbed.sqlite"}
	}
	return nil
}

// danglingOutput refuses an output that is a link to nothing, --force or
// not, as report and run refuse one: it reads as no file, yet the copy
// would replace the link, not be written where it points.
func danglingOutput(out string) error {
	target, ok := regular.DanglingLink(out)
	if !ok {
		return nil
	}
	return &inputerr.Error{Path: out, Problem: fmt.Sprintf("the output is a link to %s, which does not exist; scrub neither writes through a link nor replaces one, even with --force", ctlchar.Escape(target)),
		Hint: "remove the link, or choose another name"}
}

// outputFolderError is why the folder of out, dir, which os.Stat could
// not find as a folder, cannot take the copy (st and err are os.Stat's):
// a link to nothing, a link to a file, a file, or a folder that does not
// exist.
func outputFolderError(out, dir string, st fs.FileInfo, err error) error {
	if target, ok := regular.DanglingLink(dir); ok {
		return &inputerr.Error{Path: out, Problem: fmt.Sprintf("the output folder is a link to %s, which does not exist", ctlchar.Escape(target)),
			Hint: "create that folder first, or name an output in another folder"}
	}
	if err == nil {
		what := "a file"
		if k := regular.Kind(st.Mode()); k != "" {
			what = k
		}
		if target, lerr := os.Readlink(dir); lerr == nil {
			return &inputerr.Error{Path: out, Problem: fmt.Sprintf("the output folder is a link to %s, which is %s, not a folder", ctlchar.Escape(target), what),
				Hint: "name an output in a folder"}
		}
		return &inputerr.Error{Path: out, Problem: "the output folder " + dir + " is " + what + ", not a folder",
			Hint: "name an output in a folder"}
	}
	return &inputerr.Error{Path: out, Problem: "the output folder does not exist", Err: err, Hint: "create it first"}
}

func checkScrubPaths(f *source.File, out string, opts ScrubOptions) error {
	in := f.Path
	if f.Kind == nsysdb.KindNsysRep {
		return &inputerr.Error{Path: in, Problem: "cannot scrub a .nsys-rep", Hint: nsysRepScrubHint}
	}
	if f.Kind != nsysdb.KindSQLite {
		return &inputerr.Error{Path: in, Problem: "not a SQLite database, so not an nsys SQLite export", Hint: nsysdb.ExportHint}
	}
	inAbs, err1 := filepath.Abs(in)
	outAbs, err2 := filepath.Abs(out)
	if err1 == nil && err2 == nil && filepath.Clean(inAbs) == filepath.Clean(outAbs) {
		return &inputerr.Error{Path: out, Problem: "the output is the input; Scrub never modifies its input",
			Hint: "name a different output file"}
	}
	if err := sidecarOutput(in, out); err != nil {
		return err
	}
	if strings.HasSuffix(out, string(filepath.Separator)) {
		// A folder's name: the copy would be a file named for the folder
		// inside the folder, and the work done first fail at its end.
		if st, err := os.Stat(out); err != nil || !st.IsDir() {
			there := "there is none there"
			if st, err := os.Stat(filepath.Clean(out)); err == nil && !st.IsDir() {
				there = filepath.Clean(out) + " is a file"
			}
			return &inputerr.Error{Path: out, Problem: "the output ends in " + string(filepath.Separator) + ", so it names a folder, and " + there,
				Hint: "name a file to write, as " + filepath.Join(out, "shared.sqlite") + " in a folder that exists"}
		}
	}
	if err := danglingOutput(out); err != nil {
		return err
	}
	oi, err := os.Stat(out)
	if err == nil {
		if ii, err := os.Stat(in); err == nil && os.SameFile(ii, oi) {
			return &inputerr.Error{Path: out, Problem: "the output is the input (the same file under another name); Scrub never modifies its input",
				Hint: "name a different output file"}
		}
		if oi.IsDir() {
			return &inputerr.Error{Path: out, Problem: "the output is a folder", Hint: "name a file to write"}
		}
		if what := regular.Kind(oi.Mode()); what != "" {
			// --force replaces a file; a device or a pipe would be
			// swapped for the copy, gone from the machine.
			return &inputerr.Error{Path: out, Problem: "the output is " + what + ", not a file, which --force does not replace",
				Hint: "name a file to write"}
		}
		if !opts.Force {
			return existsError(out)
		}
	} else if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		// Not a folder on the way is the folder's to tell, below.
		return &inputerr.Error{Path: out, Problem: "cannot check the output file", Err: err, Hint: "check the path"}
	}
	if st, err := os.Stat(filepath.Dir(outAbs)); err != nil || !st.IsDir() {
		return outputFolderError(out, filepath.Dir(outAbs), st, err)
	}
	return nil
}

// copyFile copies src into a new file dst: from r where the caller holds
// src open, else opened as a regular file.
func copyFile(src string, r io.Reader, dst string) error {
	if r == nil {
		in, _, err := inputerr.Open(src)
		if err != nil {
			return err
		}
		defer in.Close()
		r = in
	}
	o, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(o, r); err != nil {
		o.Close()
		return err
	}
	return o.Close()
}

// scrubCopy rewrites the working copy and writes it, vacuumed, to a new
// temporary file beside out, whose name it returns.
func scrubCopy(ctx context.Context, work, out string, rep *Report, opts ScrubOptions) (string, error) {
	db, err := sql.Open("sqlite3", nsysdb.URI(work, "mode=rw"))
	if err != nil {
		return "", err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA secure_delete = ON`); err != nil {
		return "", err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	s := &scrubber{tx: tx, rep: rep, opts: opts}
	if err := s.loadSchema(); err != nil {
		return "", err
	}
	places := func() error { return walkPlaces(s.tx, s.table, s) }
	steps := []func() error{s.schemaNames, places, s.processes, s.secrets}
	for _, step := range steps {
		if err := step(); err != nil {
			return "", err
		}
	}
	if err := tx.Commit(); err != nil {
		return "", err
	}

	f, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+scrubTmpOutInfix+strconv.Itoa(os.Getpid())+"-*.tmp")
	if err != nil {
		return "", err
	}
	tmpOut := f.Name()
	f.Close()
	if err := os.Remove(tmpOut); err != nil { // VACUUM INTO wants a new file
		return "", err
	}
	if _, err := conn.ExecContext(ctx, `VACUUM INTO ?`, tmpOut); err != nil {
		os.Remove(tmpOut)
		return "", fmt.Errorf("VACUUM INTO %s: %w", tmpOut, err)
	}
	return tmpOut, nil
}

type scrubber struct {
	tx   *sql.Tx
	rep  *Report
	opts ScrubOptions
	// tables: name -> columns and their declared types.
	tables map[string][]column
}

type column struct {
	name, typ   string
	refsStrings bool // declared "REFERENCES StringIds(id)" in the schema comment
}

// stringRefRE finds column definitions whose schema comment says they hold
// StringIds ids, as nsys writes them:
//
//	nameId    INTEGER   NOT NULL,   -- REFERENCES StringIds(id) -- Thread name
var stringRefRE = regexp.MustCompile(`(?m)^\s*"?(\w+)"?\s[^\n]*--\s*REFERENCES\s+` + regexp.QuoteMeta(nsysdb.TableStrings) + `\(id\)`)

func (s *scrubber) loadSchema() error {
	s.tables = map[string][]column{}
	type table struct {
		name string
		ddl  sql.NullString
	}
	schema, err := readRows(s.tx, func(t *table) []any { return []any{&t.name, &t.ddl} },
		`SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		return err
	}
	for _, t := range schema {
		refs := map[string]bool{}
		for _, m := range stringRefRE.FindAllStringSubmatch(t.ddl.String, -1) {
			refs[m[1]] = true
		}
		cols, err := readRows(s.tx, func(c *column) []any { return []any{&c.name, &c.typ} },
			`SELECT name, type FROM pragma_table_info(?)`, t.name)
		if err != nil {
			return err
		}
		for _, c := range cols {
			c.refsStrings = refs[c.name]
			s.tables[t.name] = append(s.tables[t.name], c)
		}
	}
	return nil
}

func (s *scrubber) has(table string) bool { return len(s.tables[table]) > 0 }

// table returns the highest-versioned table of the logical name that the
// file holds (nsysdb.ResolveTables), or "".
func (s *scrubber) table(logical string) string {
	t := nsysdb.ResolveTables(sortedKeys(s.tables), logical)[logical]
	if !s.has(t) {
		return ""
	}
	return t
}

func (s *scrubber) hasColumn(table, col string) bool {
	for _, c := range s.tables[table] {
		if c.name == col {
			return true
		}
	}
	return false
}

// scrubVar returns the variable as a shareable capture may hold it, and
// false when it is to be dropped.
func (s *scrubber) scrubVar(v EnvVar) (EnvVar, bool) {
	if v.Value == Redacted {
		return v, true
	}
	if v.Name == "LD_PRELOAD" && v.Value == nsysPreload {
		return v, true
	}
	if AllowedEnv(v.Name, s.opts.Keep) && !LooksSecretValue(v.Value) {
		return v, true
	}
	if s.opts.DropNames {
		return v, false
	}
	if v.HasValue {
		v.Value = Redacted
	}
	return v, true
}

func (s *scrubber) scrubVars(vars []EnvVar) []EnvVar {
	out := vars[:0:0]
	for _, v := range vars {
		if nv, ok := s.scrubVar(v); ok {
			out = append(out, nv)
		}
	}
	return out
}

// deviceEnv rewrites the machine's environment block without what Scan
// flagged.
func (s *scrubber) deviceEnv(table string, rowid int64, value string) error {
	nv := FormatDeviceEnv(s.scrubVars(ParseDeviceEnv(value)))
	if nv == value {
		return nil
	}
	_, err := s.tx.Exec(`UPDATE `+nsysdb.QuoteIdent(table)+` SET `+nsysdb.QuoteIdent(nsysdb.ColValue)+` = ? WHERE rowid = ?`, nv, rowid)
	return err
}

// metaCapture drops or masks a variable given to the profiled process, a
// working folder under a home, and credentials in the command.
func (s *scrubber) metaCapture(table string, rowid int64, name, value string) error {
	nv := value
	switch {
	case strings.HasSuffix(name, ":ENVIRONMENT_VARIABLE"):
		v := parseMetaEnv(value)
		sv, keep := s.scrubVar(v)
		if !keep {
			_, err := s.tx.Exec(`DELETE FROM `+nsysdb.QuoteIdent(table)+` WHERE rowid = ?`, rowid)
			return err
		}
		if sv != v {
			nv = sv.Name + `="` + sv.Value + `"`
		}
	case strings.HasSuffix(name, ":WORKING_DIR"):
		if homeDirRE.MatchString(value) {
			nv = Redacted
		}
	default:
		for _, v := range FindSecrets(value) {
			nv = strings.ReplaceAll(nv, v.Value, Redacted)
		}
	}
	if nv == value {
		return nil
	}
	_, err := s.tx.Exec(`UPDATE `+nsysdb.QuoteIdent(table)+` SET `+nsysdb.QuoteIdent(nsysdb.ColValue)+` = ? WHERE rowid = ?`, nv, rowid)
	return err
}

// stringBlock rewrites an environment block kept as a string.
func (s *scrubber) stringBlock(table string, id int64, block []byte) error {
	vars := parseBlock(block)
	if !isEnvBlock(vars) {
		return nil
	}
	nb := formatBlock(s.scrubVars(vars))
	if bytes.Equal(nb, block) {
		return nil
	}
	// Bound as a Go string, the text keeps its NUL separators.
	_, err := s.tx.Exec(`UPDATE `+nsysdb.QuoteIdent(table)+` SET `+nsysdb.QuoteIdent(nsysdb.ColValue)+` = ? WHERE `+nsysdb.QuoteIdent(nsysdb.ColID)+` = ?`, string(nb), id)
	return err
}

func (s *scrubber) processes() error {
	procTable := s.table(nsysdb.TableProcesses)
	if procTable == "" {
		return nil
	}
	threads, strs := s.table(nsysdb.TableThreadNames), s.table(nsysdb.TableStrings)
	ppid, pname := nsysdb.QuoteIdent(nsysdb.ColPID), nsysdb.QuoteIdent(nsysdb.ColName)
	// A process whose pid another process of the capture shares (a second
	// host, a pid reused) is removed by its globalPid's host and pid bits
	// (scrub_procs), never by the pid the profiled program may hold too.
	var pids, procs []int64
	seen, seenProc := map[int64]bool{}, map[int64]bool{}
	for _, f := range s.rep.Findings {
		if f.Kind != KindProcess {
			continue
		}
		if f.hasProcess {
			if !seenProc[f.process] {
				seenProc[f.process] = true
				procs = append(procs, f.process)
			}
			continue
		}
		var pid int64
		if _, err := fmt.Sscanf(f.Where, whereProcess, &pid); err == nil && !seen[pid] {
			seen[pid] = true
			pids = append(pids, pid)
		}
	}
	if len(pids) == 0 && len(procs) == 0 {
		return nil
	}
	if _, err := s.tx.Exec(`CREATE TEMP TABLE scrub_pids (pid INTEGER PRIMARY KEY); CREATE TEMP TABLE scrub_procs (proc INTEGER PRIMARY KEY)`); err != nil {
		return err
	}
	for _, p := range pids {
		if _, err := s.tx.Exec(`INSERT INTO scrub_pids VALUES (?)`, p); err != nil {
			return err
		}
	}
	for _, p := range procs {
		if _, err := s.tx.Exec(`INSERT INTO scrub_procs VALUES (?)`, p); err != nil {
			return err
		}
	}
	// named is the condition that a row's global id (column key) names a
	// removed process.
	named := func(key string) string {
		k := nsysdb.QuoteIdent(key)
		return `(` + nsysdb.PIDExpr(k) + ` IN (SELECT pid FROM scrub_pids) OR ` + nsysdb.ProcessExpr(k) + ` IN (SELECT proc FROM scrub_procs))`
	}
	listed := `(` + ppid + ` IN (SELECT pid FROM scrub_pids)`
	if s.hasColumn(procTable, nsysdb.ColGlobalPid) {
		listed += ` OR ` + nsysdb.ProcessExpr(nsysdb.QuoteIdent(nsysdb.ColGlobalPid)) + ` IN (SELECT proc FROM scrub_procs)`
	}
	listed += `)`
	// Thread-name strings of the removed processes, to drop afterwards
	// where nothing else refers to them.
	var nameIDs []int64
	if s.hasColumn(threads, nsysdb.ColNameID) && s.hasColumn(threads, nsysdb.ColGlobalTid) {
		var err error
		nameIDs, err = readRows(s.tx, func(id *int64) []any { return []any{id} },
			`SELECT DISTINCT `+nsysdb.QuoteIdent(nsysdb.ColNameID)+` FROM `+nsysdb.QuoteIdent(threads)+` WHERE `+named(nsysdb.ColGlobalTid))
		if err != nil {
			return err
		}
	}
	// Their names too: the snapshot interns them in the string table.
	if _, err := s.tx.Exec(`CREATE TEMP TABLE scrub_names AS SELECT DISTINCT ` + pname + ` AS name FROM ` + nsysdb.QuoteIdent(procTable) + ` WHERE ` + listed + ` AND ` + pname + ` IS NOT NULL`); err != nil {
		return err
	}
	if _, err := s.tx.Exec(`DELETE FROM ` + nsysdb.QuoteIdent(procTable) + ` WHERE ` + listed); err != nil {
		return err
	}
	for _, t := range sortedKeys(s.tables) {
		for _, key := range []string{nsysdb.ColGlobalPid, nsysdb.ColGlobalTid} {
			if !s.hasColumn(t, key) {
				continue
			}
			q := `DELETE FROM ` + nsysdb.QuoteIdent(t) + ` WHERE ` + named(key)
			if _, err := s.tx.Exec(q); err != nil {
				return fmt.Errorf("table %s: %w", t, err)
			}
		}
	}
	if err := s.dropStrings(strs, nameIDs); err != nil {
		return err
	}
	_, err := s.tx.Exec(`DROP TABLE temp.scrub_pids; DROP TABLE temp.scrub_procs; DROP TABLE temp.scrub_names`)
	return err
}

// secrets replaces every credential-looking value Scan found, live or in
// unused space, wherever else it is stored in a text column.
func (s *scrubber) secrets() error {
	var values [][]byte
	seen := map[string]bool{}
	for _, f := range s.rep.Findings {
		if (f.Kind == KindSecret || f.Kind == KindCommand || f.Kind == KindWorkingDir) && len(f.value) >= 4 && !seen[f.value] {
			seen[f.value] = true
			values = append(values, []byte(f.value))
		}
		for _, line := range f.lines {
			if len(line) >= 4 && !seen[line] {
				seen[line] = true
				values = append(values, []byte(line))
			}
		}
	}
	if len(values) == 0 {
		return nil
	}
	m := newValueMatcher(values)
	for _, t := range sortedKeys(s.tables) {
		for _, c := range s.tables[t] {
			if err := s.replaceIn(t, c.name, numericType(c.typ), m); err != nil {
				return fmt.Errorf("table %s column %s: %w", t, c.name, err)
			}
		}
	}
	return nil
}

// replaceIn redacts the values m looks for wherever the strings of a
// table's column hold them; in a column declared as numbers (numeric),
// only the strings SQLite kept as they are. The column is read once, its
// rows' bytes searched for every value at once (m), and only the rows that
// hold one are written, where a query per few hundred values made SQLite
// compile and run an expression of hundreds of terms per column again and
// again (10,000 stale values: most of a scrub's 10 s).
func (s *scrubber) replaceIn(table, col string, numeric bool, m *valueMatcher) error {
	qc := nsysdb.QuoteIdent(col)
	where := qc + ` IS NOT NULL`
	if numeric {
		where = `typeof(` + qc + `) IN ('text', 'blob')`
	}
	type hit struct {
		id  int64
		val any
	}
	var hits []hit
	rows, err := s.tx.Query(`SELECT rowid, CAST(` + qc + ` AS BLOB), typeof(` + qc + `) FROM ` + nsysdb.QuoteIdent(table) + ` WHERE ` + where)
	if err != nil {
		return err
	}
	defer rows.Close()
	var (
		id  int64
		b   []byte
		typ string
	)
	for rows.Next() {
		if err := rows.Scan(&id, &b, &typ); err != nil {
			return err
		}
		nb, ok := m.redact(b)
		if !ok {
			continue
		}
		var val any = string(nb)
		if typ == "blob" {
			val = nb
		}
		hits = append(hits, hit{id, val})
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	for _, h := range hits {
		if _, err := s.tx.Exec(`UPDATE `+nsysdb.QuoteIdent(table)+` SET `+qc+` = ? WHERE rowid = ?`, h.val, h.id); err != nil {
			return err
		}
	}
	return nil
}

// valueMatcher finds, in one pass over some bytes, which of many values
// (each of 4 bytes or more) they hold: the values are found by their first
// 4 bytes, a table of their first 2 passing over most offsets at once.
type valueMatcher struct {
	values [][]byte
	head2  [1 << 16]bool
	byHead map[uint32][]int32
}

func newValueMatcher(values [][]byte) *valueMatcher {
	m := &valueMatcher{values: values, byHead: map[uint32][]int32{}}
	for i, v := range values {
		if len(v) < 4 {
			continue // secrets keeps none: a value this short would redact at random
		}
		m.head2[uint16(v[0])|uint16(v[1])<<8] = true
		k := head4(v)
		m.byHead[k] = append(m.byHead[k], int32(i))
	}
	return m
}

func head4(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// found returns, in the values' order, the values b holds.
func (m *valueMatcher) found(b []byte) []int {
	var out []int
	for i := 0; i+4 <= len(b); i++ {
		if !m.head2[uint16(b[i])|uint16(b[i+1])<<8] {
			continue
		}
		for _, k := range m.byHead[head4(b[i:])] {
			if bytes.HasPrefix(b[i:], m.values[k]) {
				out = append(out, int(k))
			}
		}
	}
	if len(out) < 2 {
		return out
	}
	sort.Ints(out)
	return slices.Compact(out)
}

// redact replaces, in the values' order, every value b holds with
// Redacted, and again while the result still holds one (a value that only
// the redaction of another made); ok is false where b holds none.
func (m *valueMatcher) redact(b []byte) (nb []byte, ok bool) {
	nb = b
	for round := 0; round < 8; round++ {
		found := m.found(nb)
		if len(found) == 0 {
			break
		}
		ok = true
		for _, k := range found {
			nb = bytes.ReplaceAll(nb, m.values[k], []byte(Redacted))
		}
	}
	return nb, ok
}

// dropStrings deletes, from the string table strs, the removed processes'
// thread names (nameIDs) and process names (temp.scrub_names) where no
// column the schema declares as a string reference still points at them.
func (s *scrubber) dropStrings(strs string, nameIDs []int64) error {
	if strs == "" || !s.hasColumn(strs, nsysdb.ColValue) {
		return nil
	}
	var refs []string
	for _, t := range sortedKeys(s.tables) {
		for _, c := range s.tables[t] {
			if c.refsStrings {
				// NOT IN over a NULL would match nothing.
				refs = append(refs, fmt.Sprintf(`SELECT %[1]s FROM %[2]s WHERE %[1]s IS NOT NULL`, nsysdb.QuoteIdent(c.name), nsysdb.QuoteIdent(t)))
			}
		}
	}
	// Without the schema comments (older exports) nothing is known to be
	// unreferenced, so the strings stay.
	if len(refs) > 0 {
		unref := ` AND ` + nsysdb.QuoteIdent(nsysdb.ColID) + ` NOT IN (` + strings.Join(refs, " UNION ") + `)`
		stmt, err := s.tx.Prepare(`DELETE FROM ` + nsysdb.QuoteIdent(strs) + ` WHERE ` + nsysdb.QuoteIdent(nsysdb.ColID) + ` = ?` + unref)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, id := range nameIDs {
			if _, err := stmt.Exec(id); err != nil {
				return err
			}
		}
		if _, err := s.tx.Exec(`DELETE FROM ` + nsysdb.QuoteIdent(strs) + ` WHERE ` + nsysdb.QuoteIdent(nsysdb.ColValue) + ` IN (SELECT name FROM scrub_names)` + unref); err != nil {
			return err
		}
	}
	return nil
}
