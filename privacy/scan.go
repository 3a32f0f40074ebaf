package privacy

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	_ "github.com/mattn/go-sqlite3" // SQLite driver for database/sql

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/internal/sqlitefile"
	"github.com/nsyscheck/nsyscheck/source"
)

// NsysProcesses are the names of nsys's own processes, which every capture
// records beside the profiled program.
var NsysProcesses = []string{"nsys", "nsys-launcher", "nsys-tee", "QdstrmImporter", "nsys-ui", "nsys-exporter", "quadd_d"}

// Where labels of the structured locations.
const (
	whereDeviceEnv = nsysdb.TableSystemEnv + " row " + nsysdb.EnvDevice
	whereMetaEnv   = nsysdb.TableMetaCapture + " row %s"
	whereBlock     = nsysdb.TableStrings + " row %d (environment block no table refers to)"
	whereProcess   = nsysdb.TableProcesses + " pid %d"
	// whereProcessHost follows whereProcess where two processes share
	// the pid: the process's own globalPid (its host and pid bits).
	whereProcessHost = " globalPid %d"
)

// Scan reports what a capture file, opened by source, exposes. An SQLite
// export is queried through its open database (TARGET_INFO_SYSTEM_ENV,
// META_DATA_CAPTURE, StringIds, PROCESSES) and its raw bytes are searched
// too, through the file source holds open, so that stale copies in unused
// pages are found and reported apart. A .nsys-rep is searched as raw bytes
// only: nsys stores the environment strings in it uncompressed, but nothing
// tells live bytes from stale ones there.
//
// A step of an SQLite export's scan that fails (a table that cannot be
// read) leaves the others to run: the report then holds what they found,
// and the error says what could not be scanned, so that a caller fails
// closed (a file that could not be cleared is not clean). With any other
// error the report is nil.
//
// Scan never writes to the file or beside it.
func Scan(ctx context.Context, f *source.File) (*Report, error) {
	return ScanKnown(ctx, f, Known{})
}

// Known is what a reader of the file already found that the scan would
// otherwise find again: the processes of every row of the runtime table
// (RuntimePIDs, in order), named RuntimeTable.
type Known struct {
	RuntimeTable string
	RuntimePIDs  []int64
}

// ScanKnown is Scan, taking what known holds rather than reading it from
// the file again: the same report, without the runtime table's pass where
// the scan reads the table known names.
func ScanKnown(ctx context.Context, f *source.File, known Known) (*Report, error) {
	switch f.Kind {
	case nsysdb.KindSQLite:
		return scanSQLite(ctx, f, known)
	case nsysdb.KindNsysRep:
		r := &Report{Path: f.Path, Format: "nsys-rep"}
		r.Notes = append(r.Notes, "a .nsys-rep is searched as raw bytes only; its SQLite export gives a fuller answer")
		if err := r.addRaw(ctx, f, f.Size, nil, nil); err != nil {
			return nil, &inputerr.Error{Path: f.Path, Problem: "cannot read the capture", Err: err,
				Hint: "check the path; give a SQLite export (.sqlite) or a .nsys-rep"}
		}
		r.sort()
		return r, nil
	}
	return nil, &inputerr.Error{Path: f.Path, Problem: "neither a SQLite database nor an Nsight Systems report",
		Hint: "give the .nsys-rep or its SQLite export (nsys export --type sqlite)"}
}

// ScanPath opens the capture file at path (source.OpenFile) and scans it.
func ScanPath(ctx context.Context, path string) (*Report, error) {
	f, err := source.OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Scan(ctx, f)
}

func scanSQLite(ctx context.Context, f *source.File, known Known) (*Report, error) {
	// The committed state: what a -wal or hot -journal beside the file
	// holds counts, and a file another program is writing was refused when
	// it was opened.
	path := f.Path
	r := &Report{Path: path, Format: "sqlite"}
	for _, side := range sqlitefile.Sidecars(path) {
		r.Notes = append(r.Notes, filepath.Base(side)+" holds changes SQLite has not written into the file yet: "+
			"they were read through SQLite, but its raw bytes were not searched")
	}
	// One connection of the export's pool, the one the stream's checks
	// share with the scan (sqlitefile.PoolSize), for all its queries.
	conn, err := f.DB.Conn(ctx)
	if err != nil {
		return nil, &inputerr.Error{Path: path, Problem: "cannot open the SQLite export", Err: err, Hint: nsysdb.ExportHint}
	}
	defer conn.Close()
	s := &sqliteScan{db: scanDB{ctx: ctx, db: conn}, r: r, known: known, file: f}
	// A step that fails does not stop the others, nor the search of the
	// raw bytes: what they find is reported beside the failure, which the
	// caller treats as a scan that could not clear the file.
	failed := s.run()
	pm, err := s.pm, s.pmErr
	if pm == nil && err == nil {
		pm, err = buildPageMap(f, f.Size, s.roots)
	}
	if err != nil {
		r.Notes = append(r.Notes, "the file's pages could not be parsed ("+err.Error()+"), so raw hits are not told apart as live or unused")
		pm = nil
	} else {
		r.UnusedBytes = pm.unusedBytes()
	}
	if err := r.addRaw(ctx, f, f.Size, pm, s.covered); err != nil {
		return nil, &inputerr.Error{Path: path, Problem: "cannot read the capture", Err: err, Hint: nsysdb.ExportHint}
	}
	r.sort()
	return r, failed
}

// scanDB runs the scan's queries under its context: a cancelled context
// interrupts them.
type scanDB struct {
	ctx context.Context
	db  *sql.Conn
}

func (d scanDB) Query(q string, args ...any) (*sql.Rows, error) {
	return d.db.QueryContext(d.ctx, q, args...)
}
func (d scanDB) QueryRow(q string, args ...any) *sql.Row {
	return d.db.QueryRowContext(d.ctx, q, args...)
}

type sqliteScan struct {
	db      scanDB
	r       *Report
	tables  map[string]bool
	logical map[string]string // logical table -> the table that holds its data
	roots   []int64
	covered map[string]bool // name+"="+value of every structured finding
	known   Known

	// file is the export's file, its page map built once the schema is
	// read (pm, or pmErr where its pages could not be parsed); rootOf
	// gives a table's root page.
	file   *source.File
	pm     *pageMap
	pmErr  error
	rootOf map[string]int64
}

func (s *sqliteScan) fail(where string, err error) error {
	return &inputerr.Error{Path: s.r.Path, Where: where, Problem: "cannot read the table", Err: err, Hint: nsysdb.ExportHint}
}

// table is the table of the file that holds the logical table's data, ""
// when it has none.
func (s *sqliteScan) table(logical string) string { return s.logical[logical] }

// run reads the schema, then runs every structured step of the scan, each
// whatever the others did; it returns the first failure.
func (s *sqliteScan) run() error {
	s.tables = map[string]bool{}
	s.covered = map[string]bool{}
	s.rootOf = map[string]int64{}
	schemaErr := func(err error) error {
		return &inputerr.Error{Path: s.r.Path, Problem: "cannot read the database schema", Err: err, Hint: nsysdb.ExportHint}
	}
	rows, err := s.db.Query(`SELECT name, type, rootpage, ifnull(sql, '') FROM sqlite_schema`)
	if err != nil {
		return schemaErr(err)
	}
	var objs []nsysdb.SchemaObject
	for rows.Next() {
		var o nsysdb.SchemaObject
		var root sql.NullInt64
		if err := rows.Scan(&o.Name, &o.Type, &root, &o.SQL); err != nil {
			rows.Close()
			return schemaErr(err)
		}
		if o.Type == "table" {
			s.tables[o.Name] = true
			objs = append(objs, o)
		}
		if root.Valid && root.Int64 > 0 {
			s.roots = append(s.roots, root.Int64)
			if o.Type == "table" {
				s.rootOf[o.Name] = root.Int64
			}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return schemaErr(err)
	}
	if s.file != nil {
		s.pm, s.pmErr = buildPageMap(s.file, s.file.Size, s.roots)
	}
	// Views are left out: the scan never runs the query one holds.
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	s.logical, err = nsysdb.Resolve(objs, func(t string) (bool, error) { return hasRows(s.db, t) }, scannedTables...)
	if err != nil {
		keep(&inputerr.Error{Path: s.r.Path, Problem: "cannot tell which table to scan", Err: err, Hint: nsysdb.ExportHint})
		s.logical = nsysdb.ResolveTables(objNames(objs), scannedTables...)
	}
	pids, err := profiledPIDs(s.db, s.table, s.known)
	if err != nil {
		keep(s.fail("table "+s.table(nsysdb.TableRuntime), err))
	}
	s.r.ProfiledPIDs = pids
	if err := walkPlaces(s.db, s.table, s); err != nil {
		var pe *placeError
		if errors.As(err, &pe) {
			err = s.fail("table "+pe.table, pe.err)
		}
		keep(err)
	}
	keep(s.processes())
	keep(s.textColumns())
	keep(s.schemaNames())
	return first
}

// scannedTables are the logical tables the scan reads by name.
var scannedTables = []string{nsysdb.TableRuntime, nsysdb.TableDriver, nsysdb.TableSystemEnv, nsysdb.TableMetaCapture,
	nsysdb.TableStrings, nsysdb.TableProcesses, nsysdb.TableThreadNames}

// hasRows reports whether a table holds a row.
func hasRows(db querier, table string) (bool, error) {
	rows, err := db.Query(`SELECT 1 FROM ` + nsysdb.QuoteIdent(table) + ` LIMIT 1`)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	any := rows.Next()
	return any, rows.Err()
}

func objNames(objs []nsysdb.SchemaObject) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.Name
	}
	return out
}

// profiledPIDs returns the processes that made CUDA runtime (or driver)
// calls, decoded from globalTid (nsysdb.PIDExpr); a call without one (the
// column is nullable) names none. The runtime table's are known's where it
// names that table.
func profiledPIDs(db querier, table func(string) string, known Known) ([]int64, error) {
	seen := map[int64]bool{}
	g := nsysdb.QuoteIdent(nsysdb.ColGlobalTid)
	for _, logical := range []string{nsysdb.TableRuntime, nsysdb.TableDriver} {
		t := table(logical)
		if t == "" {
			continue
		}
		if logical == nsysdb.TableRuntime && known.RuntimeTable == t && known.RuntimePIDs != nil {
			for _, p := range known.RuntimePIDs {
				seen[p] = true
			}
			continue
		}
		rows, err := db.Query(`SELECT DISTINCT ` + nsysdb.PIDExpr(g) + ` FROM ` + nsysdb.QuoteIdent(t) + ` WHERE ` + g + ` IS NOT NULL`)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var pid int64
			if err := rows.Scan(&pid); err != nil {
				rows.Close()
				return nil, err
			}
			seen[pid] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	var out []int64
	for p := range seen {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

// EnvVar is one NAME=value entry of a recorded environment.
type EnvVar struct {
	Name, Value string
	HasValue    bool // false for a bare NAME (StringIds blocks keep those)
}

// ParseDeviceEnv splits TARGET_INFO_SYSTEM_ENV's DeviceEnvironment,
// "NAME=value;NAME=value". A piece that does not start with NAME= belongs to
// the previous value (a value holding ";").
func ParseDeviceEnv(s string) []EnvVar {
	var out []EnvVar
	for piece := range strings.SplitSeq(s, ";") {
		name, value, ok := strings.Cut(piece, "=")
		if ok && validName(name) {
			out = append(out, EnvVar{Name: name, Value: value, HasValue: true})
			continue
		}
		if n := len(out); n > 0 {
			out[n-1].Value += ";" + piece
		} else if piece != "" {
			out = append(out, EnvVar{Name: piece})
		}
	}
	return out
}

// FormatDeviceEnv is the inverse of ParseDeviceEnv.
func FormatDeviceEnv(vars []EnvVar) string {
	parts := make([]string, len(vars))
	for i, v := range vars {
		parts[i] = v.Name
		if v.HasValue {
			parts[i] += "=" + v.Value
		}
	}
	return strings.Join(parts, ";")
}

// parseBlock splits a NUL-separated environment block (as /proc/PID/environ).
func parseBlock(b []byte) []EnvVar {
	var out []EnvVar
	for piece := range bytes.SplitSeq(b, []byte{0}) {
		if len(piece) == 0 {
			continue
		}
		name, value, ok := strings.Cut(string(piece), "=")
		out = append(out, EnvVar{Name: name, Value: value, HasValue: ok})
	}
	return out
}

func formatBlock(vars []EnvVar) []byte {
	var b bytes.Buffer
	for i, v := range vars {
		if i > 0 {
			b.WriteByte(0)
		}
		b.WriteString(v.Name)
		if v.HasValue {
			b.WriteByte('=')
			b.WriteString(v.Value)
		}
	}
	return b.Bytes()
}

// isEnvBlock tells a NUL-separated environment block from other strings:
// at least two entries, and most of them NAME=value.
func isEnvBlock(vars []EnvVar) bool {
	if len(vars) < 2 {
		return false
	}
	good := 0
	for _, v := range vars {
		if validName(v.Name) {
			good++
		}
	}
	return good*4 >= len(vars)*3
}

func validName(n string) bool {
	if n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// classify says what a recorded variable exposes, if anything.
func classify(v EnvVar) (Kind, bool) {
	switch {
	case v.Value == Redacted || v.Value == `"`+Redacted+`"`:
		return "", false
	case LooksSecretName(v.Name) || LooksSecretValue(v.Value):
		return KindSecret, true
	case InjectedByNsys(v.Name, v.Value):
		return "", false // nsys's own injection
	case AllowedEnv(v.Name, nil):
		return "", false
	case v.Name == "PWD" || v.Name == "OLDPWD":
		return KindWorkingDir, true
	}
	return KindEnv, true
}

func (s *sqliteScan) addVar(v EnvVar, where string) {
	k, ok := classify(v)
	if !ok {
		return
	}
	s.r.Findings = append(s.r.Findings, Finding{Kind: k, Name: v.Name, Where: where, Masked: maskFor(k, v.Value), value: v.Value})
	s.covered[v.Name+"="+v.Value] = true
	if k == KindSecret {
		s.covered["="+v.Value] = true
		for _, sec := range FindSecrets(v.Value) {
			s.covered["="+sec.Value] = true // a token inside the value
		}
	}
}

// deviceEnv reports the variables of the machine's environment block.
func (s *sqliteScan) deviceEnv(_ string, _ int64, value string) error {
	for _, e := range ParseDeviceEnv(value) {
		s.addVar(e, whereDeviceEnv)
	}
	return nil
}

// parseMetaEnv splits META_DATA_CAPTURE's NAME="value".
func parseMetaEnv(s string) EnvVar {
	name, value, ok := strings.Cut(s, "=")
	if ok && len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"' {
		value = value[1 : len(value)-1]
	}
	return EnvVar{Name: name, Value: value, HasValue: ok}
}

// homeDirRE matches a folder under a user's home, which names the account.
var homeDirRE = regexp.MustCompile(`^(/home/|/Users/|[A-Za-z]:\\Users\\)[^/\\]+`)

// metaCapture reports a variable given to the profiled process, a working
// folder under a home, and credentials in the command or other settings.
func (s *sqliteScan) metaCapture(_ string, _ int64, name, value string) error {
	where := fmt.Sprintf(whereMetaEnv, name)
	switch {
	case strings.HasSuffix(name, ":ENVIRONMENT_VARIABLE"):
		s.addVar(parseMetaEnv(value), where)
	case strings.HasSuffix(name, ":WORKING_DIR"):
		if homeDirRE.MatchString(value) {
			s.r.Findings = append(s.r.Findings, Finding{Kind: KindWorkingDir, Name: "WORKING_DIR", Where: where,
				Masked: Abbrev(value), value: value})
		}
	default:
		// COMMAND and any other setting: only credentials matter.
		for _, sec := range FindSecrets(value) {
			s.addSecret(KindCommand, sec, where)
		}
	}
	return nil
}

// addSecret records a credential found by FindSecrets, once per name and
// value.
func (s *sqliteScan) addSecret(k Kind, sec Secret, where string) {
	s.r.addSecretOnce(s.covered, k, sec, where)
}

// addSecretOnce records a credential found by FindSecrets unless covered
// holds its name and value or its value already, and marks it covered.
func (r *Report) addSecretOnce(covered map[string]bool, k Kind, sec Secret, where string) {
	if covered[sec.Name+"="+sec.Value] || covered["="+sec.Value] {
		return
	}
	r.Findings = append(r.Findings, Finding{Kind: k, Name: sec.Name, Where: where, Masked: maskFor(k, sec.Value), value: sec.Value, format: sec.Format})
	covered[sec.Name+"="+sec.Value] = true
	covered["="+sec.Value] = true
}

// textColumns runs the secret detector over every string of every text
// column of every table (StringIds with NVTX text, thread, kernel and
// process names; NVTX_EVENTS text; anything a newer export adds), so that
// a credential is found wherever the capture carries it. The strings are
// read as the table holds them: SELECT DISTINCT would sort them all into a
// temporary b-tree first (30 s for StringIds of 1.5M strings, where reading
// them takes 2 s); a short string seen lately is not scanned again.
func (s *sqliteScan) textColumns() error {
	tables := sortedKeys(s.tables)
	seen := recentStrings{}
	for _, t := range tables {
		cols, err := tableColumns(s.db, t)
		if err != nil {
			return s.fail("table "+t, err)
		}
		if err := s.textInNumbers(t, cols, seen); err != nil {
			return err
		}
		for _, c := range cols {
			if numericType(c.typ) {
				continue
			}
			rows, err := s.db.Query(textQuery(t, c.name))
			if err != nil {
				return s.fail("table "+t, err)
			}
			where := "table " + t + " column " + c.name
			var key *keyTail // a private key whose lines are the strings after it
			var keys []int
			for rows.Next() {
				var b []byte
				if err := rows.Scan(&b); err != nil {
					rows.Close()
					return s.fail("table "+t, err)
				}
				if key != nil {
					if more, ended := key.next(b); !more {
						key.done(s.r, ended)
						key = nil
					}
				}
				// The string's secrets, found once: for the report, and
				// for the key whose lines may follow.
				var secs []Secret
				searched := false
				if !seen.again(b) {
					secs, searched = FindSecrets(string(b)), true
					for _, sec := range secs {
						s.addSecret(KindSecret, sec, where)
					}
				}
				if bytes.Contains(b, []byte("-----BEGIN")) && openKey(string(b)) {
					if !searched {
						secs = FindSecrets(string(b))
					}
					if at := s.r.keyFinding(secs); at >= 0 {
						key = &keyTail{at: at}
						keys = append(keys, at)
					}
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return s.fail("table "+t, err)
			}
			if key != nil {
				key.done(s.r, false)
			}
			for _, at := range keys {
				keyRows(&s.r.Findings[at], where)
			}
		}
	}
	return nil
}

// textInNumbers runs the secret detector over the strings stored in the
// columns of table t declared as numbers (SQLite keeps a string that is no
// number as it is, whatever the column's type), in one pass over the table.
func (s *sqliteScan) textInNumbers(t string, cols []column, seen recentStrings) error {
	if s.pm != nil {
		if holds, known := s.pm.textRoots[s.rootOf[t]]; known && !holds {
			return nil // no page of the table holds a string
		}
	}
	var sel, cond []string
	var names []string
	for _, c := range cols {
		if !numericType(c.typ) {
			continue
		}
		qc := nsysdb.QuoteIdent(c.name)
		sel = append(sel, `CASE WHEN typeof(`+qc+`) IN ('text', 'blob') THEN CAST(`+qc+` AS BLOB) END`)
		cond = append(cond, `typeof(`+qc+`) IN ('text', 'blob')`)
		names = append(names, c.name)
	}
	if len(sel) == 0 {
		return nil
	}
	rows, err := s.db.Query(`SELECT ` + strings.Join(sel, ", ") + ` FROM ` + nsysdb.QuoteIdent(t) + ` WHERE ` + strings.Join(cond, " OR "))
	if err != nil {
		return s.fail("table "+t, err)
	}
	defer rows.Close()
	vals := make([][]byte, len(sel))
	ptrs := make([]any, len(sel))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return s.fail("table "+t, err)
		}
		for i, b := range vals {
			if b == nil || seen.again(b) {
				continue
			}
			for _, sec := range FindSecrets(string(b)) {
				s.addSecret(KindSecret, sec, "table "+t+" column "+names[i])
			}
		}
	}
	if err := rows.Err(); err != nil {
		return s.fail("table "+t, err)
	}
	return nil
}

// textQuery selects the strings of a table's column, in the table's order.
func textQuery(table, column string) string {
	qc, qt := nsysdb.QuoteIdent(column), nsysdb.QuoteIdent(table)
	return `SELECT CAST(` + qc + ` AS BLOB) FROM ` + qt + ` WHERE typeof(` + qc + `) IN ('text', 'blob')`
}

// recentStrings remembers the short strings a scan saw lately, so that a
// column repeating a few values (an NVTX range's name on every instance)
// is scanned once per value; its memory is bounded (recentMax strings of
// at most recentLen bytes), whatever the capture holds.
type recentStrings map[string]struct{}

const (
	recentMax = 4096
	recentLen = 256
)

// again reports whether b was seen lately, and remembers it when short.
func (r recentStrings) again(b []byte) bool {
	if len(b) > recentLen {
		return false
	}
	if _, ok := r[string(b)]; ok {
		return true
	}
	if len(r) >= recentMax {
		clear(r)
	}
	r[string(b)] = struct{}{}
	return false
}

// numericType reports whether a declared column type holds numbers only
// (SQLite's affinity rules: INT, REAL, FLOA, DOUB).
func numericType(typ string) bool {
	t := strings.ToUpper(typ)
	return strings.Contains(t, "INT") || strings.Contains(t, "REAL") || strings.Contains(t, "FLOA") || strings.Contains(t, "DOUB")
}

// tableColumns lists a table's columns and declared types.
func tableColumns(db querier, table string) ([]column, error) {
	rows, err := db.Query(`SELECT name, type FROM pragma_table_info(?)`, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []column
	for rows.Next() {
		var c column
		if err := rows.Scan(&c.name, &c.typ); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// stringBlock reports the variables of an environment block kept as a string.
func (s *sqliteScan) stringBlock(_ string, id int64, block []byte) error {
	vars := parseBlock(block)
	if !isEnvBlock(vars) {
		return nil
	}
	for _, v := range vars {
		s.addVar(v, fmt.Sprintf(whereBlock, id))
	}
	return nil
}

// isNsysProcess reports whether a process name is one of nsys's own.
func isNsysProcess(name string) bool {
	base := filepath.Base(name)
	for _, n := range NsysProcesses {
		if base == n {
			return true
		}
	}
	return false
}

func (s *sqliteScan) processes() error {
	t := s.table(nsysdb.TableProcesses)
	if t == "" {
		return nil
	}
	profiled := map[int64]bool{}
	for _, p := range s.r.ProfiledPIDs {
		profiled[p] = true
	}
	command := ""
	if meta := s.table(nsysdb.TableMetaCapture); len(profiled) == 0 && meta != "" {
		// No CUDA calls: fall back to the launched command's name.
		_ = s.db.QueryRow(`SELECT `+nsysdb.QuoteIdent(nsysdb.ColValue)+` FROM `+nsysdb.QuoteIdent(meta)+` WHERE `+nsysdb.QuoteIdent(nsysdb.ColName)+` = ?`, nsysdb.CaptureCommand).Scan(&command)
		command, _, _ = strings.Cut(command, " ")
	}
	// Two processes of one pid (two hosts in one capture, a pid reused)
	// are told apart by their globalPid's host and pid bits: only then is
	// the profiled program, and a child of it, matched by those, not by its
	// pid alone.
	byProcess, profiledKeys, err := s.profiledProcesses(t)
	if err != nil {
		return s.fail("table "+t, err)
	}
	spans, err := s.threadSpans(profiled, profiledKeys)
	if err != nil {
		return s.fail("table "+s.table(nsysdb.TableThreadNames), err)
	}
	gpid := "NULL"
	if byProcess {
		gpid = nsysdb.ProcessExpr(nsysdb.QuoteIdent(nsysdb.ColGlobalPid))
	}
	rows, err := s.db.Query(`SELECT ` + nsysdb.Cols(nsysdb.ColPID, nsysdb.ColName) + `, ` + gpid + ` FROM ` + nsysdb.QuoteIdent(t) + ` ORDER BY 1`)
	if err != nil {
		return s.fail("table "+t, err)
	}
	defer rows.Close()
	for rows.Next() {
		var pid, key sql.NullInt64
		var name sql.NullString
		if err := rows.Scan(&pid, &name, &key); err != nil {
			return s.fail("table "+t, err)
		}
		// A process's name is its command line: credentials in it count
		// whoever the process is, the profiled program included.
		where := fmt.Sprintf(whereProcess, pid.Int64)
		if key.Valid {
			where += fmt.Sprintf(whereProcessHost, key.Int64<<24)
		}
		for _, sec := range FindSecrets(name.String) {
			s.addSecret(KindCommand, sec, where)
		}
		isProfiled := profiled[pid.Int64]
		if key.Valid {
			isProfiled = profiledKeys[key.Int64]
		}
		child := ChildOfProfiled(pid.Int64, spans)
		if key.Valid {
			child = ChildOfProfiled(key.Int64, spans)
		}
		if isProfiled || isNsysProcess(name.String) || child {
			continue
		}
		if command != "" && (name.String == command || filepath.Base(name.String) == filepath.Base(command)) {
			continue
		}
		f := Finding{Kind: KindProcess, Name: MaskSecrets(name.String), Where: where}
		if key.Valid {
			f.process, f.hasProcess = key.Int64, true
		}
		s.r.Findings = append(s.r.Findings, f)
	}
	return rows.Err()
}

// profiledProcesses says whether table t (PROCESSES) lists two processes of
// one pid, each with a globalPid; if so it returns the processes (host and
// pid bits, nsysdb.ProcessOf) that made CUDA runtime or driver calls.
func (s *sqliteScan) profiledProcesses(t string) (bool, map[int64]bool, error) {
	cols, err := tableColumns(s.db, t)
	if err != nil {
		return false, nil, err
	}
	hasGlobal := false
	for _, c := range cols {
		hasGlobal = hasGlobal || c.name == nsysdb.ColGlobalPid
	}
	if !hasGlobal {
		return false, nil, nil
	}
	pid, g := nsysdb.QuoteIdent(nsysdb.ColPID), nsysdb.QuoteIdent(nsysdb.ColGlobalPid)
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM (SELECT 1 FROM ` + nsysdb.QuoteIdent(t) + ` WHERE ` + pid + ` IS NOT NULL GROUP BY ` + pid +
		` HAVING count(DISTINCT ` + g + `) > 1)`).Scan(&n); err != nil || n == 0 {
		return false, nil, err
	}
	keys := map[int64]bool{}
	tid := nsysdb.QuoteIdent(nsysdb.ColGlobalTid)
	for _, logical := range []string{nsysdb.TableRuntime, nsysdb.TableDriver} {
		rt := s.table(logical)
		if rt == "" {
			continue
		}
		ids, err := readRows(s.db, func(k *int64) []any { return []any{k} },
			`SELECT DISTINCT `+nsysdb.ProcessExpr(tid)+` FROM `+nsysdb.QuoteIdent(rt)+` WHERE `+tid+` IS NOT NULL`)
		if err != nil {
			return false, nil, fmt.Errorf("table %s: %w", rt, err)
		}
		for _, k := range ids {
			keys[k] = true
		}
	}
	return true, keys, nil
}

// threadSpans returns the highest thread id ThreadNames records for each
// profiled process. With byKey (profiledProcesses's processes, where two
// share a pid) the spans are of those processes' host and pid bits
// (nsysdb.ProcessOf), MaxTID with the same host bits: a process is a child
// by ChildOfProfiled of its own bits only on its parent's host.
func (s *sqliteScan) threadSpans(profiled, byKey map[int64]bool) ([]ThreadSpan, error) {
	t := s.table(nsysdb.TableThreadNames)
	if t == "" || (len(profiled) == 0 && len(byKey) == 0) {
		return nil, nil
	}
	g := nsysdb.QuoteIdent(nsysdb.ColGlobalTid)
	of, want := nsysdb.PIDExpr(g), profiled
	if byKey != nil {
		of, want = nsysdb.ProcessExpr(g), byKey
	}
	rows, err := s.db.Query(`SELECT ` + of + `, max(` + nsysdb.TIDExpr(g) + `) FROM ` + nsysdb.QuoteIdent(t) + ` WHERE ` + g + ` IS NOT NULL GROUP BY 1`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ThreadSpan
	for rows.Next() {
		var sp ThreadSpan
		if err := rows.Scan(&sp.PID, &sp.MaxTID); err != nil {
			return nil, err
		}
		if byKey != nil {
			sp.MaxTID |= sp.PID &^ pidMask // the same host's ids
		}
		if want[sp.PID] {
			out = append(out, sp)
		}
	}
	return out, rows.Err()
}

// pidMask is the pid's bits in a process's host and pid bits
// (nsysdb.ProcessOf).
const pidMask = 1<<24 - 1

// rawEnvRE finds NAME=value strings in raw bytes: an upper-case name of at
// least two characters, an optional quote, and a printable value up to a
// quote, ";" or a control byte.
var rawEnvRE = regexp.MustCompile(`([A-Z][A-Z0-9_]+)="?([\x20-\x21\x23-\x3a\x3c-\x7e]*)`)

// rawGlue are column values SQLite stores right before a NAME=value string
// in the same record, with nothing between them.
var rawGlue = []string{"ENVIRONMENT_VARIABLE"}

// rawURLRE finds credential URLs in raw bytes.
//
// Both patterns define what the raw search (raw.go) finds; it finds the same
// matches without running them over every byte (see the tests).
var rawURLRE = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@"';\x00-\x1f]*:[^/\s"';\x00-\x1f]+@[^/\s"';@\x00-\x1f]+`)

// coveredURL reports whether a credential URL is part of a value some
// structured finding already holds.
func coveredURL(covered map[string]bool, u string) bool {
	for nv := range covered {
		if strings.Contains(nv, u) {
			return true
		}
	}
	return false
}

func (r *Report) sort() {
	rank := map[Kind]int{KindSecret: 0, KindCommand: 1, KindEnv: 2, KindWorkingDir: 3, KindProcess: 4}
	sort.SliceStable(r.Findings, func(i, j int) bool {
		a, b := r.Findings[i], r.Findings[j]
		if a.Unused != b.Unused {
			return !a.Unused
		}
		return rank[a.Kind] < rank[b.Kind]
	})
}
