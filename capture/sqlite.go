package capture

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	_ "github.com/mattn/go-sqlite3" // SQLite driver for database/sql

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/internal/sqlitefile"
)

// sqliteMagic is the 16-byte header every SQLite 3 database file starts with.
const sqliteMagic = nsysdb.SQLiteMagic

// sqliteExportHint tells the user how to make a fresh SQLite export.
const sqliteExportHint = nsysdb.ExportHint

// The logical Nsight Systems export tables nsyscheck reads (nsysdb names
// them; r.tables resolves each to its highest _V<n> version).
const (
	tabRuntime   = nsysdb.TableRuntime
	tabMemcpy    = nsysdb.TableMemcpy
	tabKernel    = nsysdb.TableKernel
	tabNVTX      = nsysdb.TableNVTX
	tabStrings   = nsysdb.TableStrings
	tabCopyOper  = nsysdb.TableCopyOper
	tabMemKind   = nsysdb.TableMemKind
	tabEventType = nsysdb.TableEventType
	tabMeta      = nsysdb.TableMetaExport
	tabGPU       = nsysdb.TableGPU
	tabCUDADev   = nsysdb.TableCUDADevice
	tabEnv       = nsysdb.TableSystemEnv
	tabThreads   = nsysdb.TableThreadNames
)

// newSQLiteReader checks an export, opens its committed state read-only
// (openSQLite), runs SQLite's quick integrity check, and returns a
// sqliteReader on it; LoadSQLite opens exports with it, the audit's copy
// reader with openSQLiteReader and the same check beside its stream. done
// closes the reader's statements and the database and removes any private
// copy; call it once, also after an error is returned.
func newSQLiteReader(path string, opts Options) (r *sqliteReader, done func(), err error) {
	r, done, err = openSQLiteReader(path, opts)
	if err != nil {
		return nil, done, err
	}
	if err := sqlitefile.Integrity(context.Background(), r.db, path); err != nil {
		done()
		return nil, func() {}, err
	}
	return r, done, nil
}

// openSQLiteReader is newSQLiteReader without the integrity check: the
// caller runs sqliteIntegrity itself (the audit's copy reader runs it beside
// its stream) and uses nothing it read before the check has passed.
func openSQLiteReader(path string, opts Options) (r *sqliteReader, done func(), err error) {
	done = func() {}
	if err := sqlitefile.CheckPath(path); err != nil {
		return nil, done, err
	}
	db, cleanup, err := sqlitefile.OpenPath(path)
	if err != nil {
		cleanup()
		return nil, done, err
	}
	r = &sqliteReader{db: db, path: path, opts: opts, strs: map[int64]string{}, devices: map[int64]bool{},
		wantCorr: map[int64]bool{}}
	return r, func() { r.close(); db.Close(); cleanup() }, nil
}

// LoadSQLite reads an Nsight Systems SQLite export (nsys export --type
// sqlite) into a Capture. The file is opened read-only and never modified.
//
// Tables an export leaves out because they would be empty (memory copies,
// kernels, NVTX) are recorded as missing facts; a missing CUDA API trace or
// string table is an error. API summaries are not computed: they can be
// derived from Calls.
func LoadSQLite(path string, opts Options) (*Capture, error) {
	r, done, err := newSQLiteReader(path, opts)
	defer done()
	if err != nil {
		return nil, err
	}
	c := &Capture{Path: path, Format: FormatSQLite, Files: []string{path},
		Sources: Sources{API: tabRuntime, Memcpy: tabMemcpy, Kernel: tabKernel, NVTX: tabNVTX}}
	if err := r.load(c); err != nil {
		return nil, err
	}
	c.Sort()
	if err := validate(c); err != nil {
		return nil, err
	}
	return c, nil
}

// sqliteReadOnlyDSN opens path read-only and immutable (nsysdb.ReadOnlyURI).
func sqliteReadOnlyDSN(path string) string { return nsysdb.ReadOnlyURI(path) }

// sqliteReader holds the state of one LoadSQLite call.
type sqliteReader struct {
	db     *sql.DB
	path   string
	opts   Options
	schema string            // EXPORT_SCHEMA_VERSION, "" if unknown
	tables map[string]string // logical name -> table name in the file
	names  []string          // every table and view of the file

	strs    map[int64]string // StringIds cache
	strStmt *sql.Stmt

	devices map[int64]bool // CUDA device ids that copies and kernels ran on

	// With opts.ProgramThread: whether only the program's thread was loaded
	// (the runtime table has thread ids), the correlation ids of its calls,
	// whether it launched kernels through cudaLaunchKernel, and its process.
	threadOnly bool
	wantCorr   map[int64]bool
	launches   bool
	pid        int64
}

func (r *sqliteReader) close() {
	if r.strStmt != nil {
		r.strStmt.Close()
	}
}

// tableError reports that a table could not be read, e.g. because the file
// is damaged.
func (r *sqliteReader) tableError(table string, err error) error {
	var ie *inputerr.Error
	if errors.As(err, &ie) {
		return err
	}
	return &inputerr.Error{Path: r.path, Where: "table " + table, Problem: "cannot read the table", Err: err,
		Hint: "the file may be damaged or truncated; " + sqliteExportHint}
}

func (r *sqliteReader) load(c *Capture) error {
	if err := r.readTables(); err != nil {
		return err
	}
	r.readMeta(c)

	if r.tables[tabRuntime] == "" {
		return &inputerr.Error{Path: r.path, Where: "table " + tabRuntime,
			Problem: inputerr.ProblemNoAPITrace,
			Hint:    "profile with nsys profile -t cuda,nvtx and export again"}
	}
	if r.tables[tabStrings] == "" {
		return &inputerr.Error{Path: r.path, Where: "table " + tabStrings,
			Problem: "no string table (" + tabStrings + ") in this export, so API, kernel and range names cannot be read",
			Hint:    sqliteExportHint}
	}
	if _, err := r.columns(tabStrings, nsysdb.ColID, nsysdb.ColValue); err != nil {
		return err
	}
	st, err := r.db.Prepare(`SELECT ` + quoteIdent(nsysdb.ColValue) + ` FROM ` + quoteIdent(r.tables[tabStrings]) + ` WHERE ` + quoteIdent(nsysdb.ColID) + ` = ?`)
	if err != nil {
		return r.tableError(r.tables[tabStrings], err)
	}
	r.strStmt = st

	if err := r.readRuntime(c); err != nil {
		return err
	}
	if err := r.readMemcpy(c); err != nil {
		return err
	}
	if err := r.readKernels(c); err != nil {
		return err
	}
	if err := r.readNVTX(c); err != nil {
		return err
	}
	if err := r.readGPU(c); err != nil {
		return err
	}
	c.Lack(FactProgram, "an Nsight Systems export holds no numbers printed by the program; give its transcript or results JSON as well")
	return nil
}

// readTables lists the file's tables and maps each logical table to the
// highest-versioned table of that name (NAME, NAME_V2, NAME_V3, ...).
func (r *sqliteReader) readTables() error {
	rows, err := r.db.Query(`SELECT name FROM sqlite_master WHERE type IN ('table', 'view')`)
	if err != nil {
		return &inputerr.Error{Path: r.path, Problem: "cannot read the database schema", Err: err,
			Hint: "the file may be damaged or truncated; " + sqliteExportHint}
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return &inputerr.Error{Path: r.path, Problem: "cannot read the database schema", Err: err, Hint: sqliteExportHint}
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		return &inputerr.Error{Path: r.path, Problem: "cannot read the database schema", Err: err,
			Hint: "the file may be damaged or truncated; " + sqliteExportHint}
	}
	if len(names) == 0 {
		return &inputerr.Error{Path: r.path, Problem: "the SQLite database holds no tables, so it is not an Nsight Systems export", Hint: sqliteExportHint}
	}
	r.names = names
	r.tables = resolveTables(names, tabRuntime, tabMemcpy, tabKernel, tabNVTX, tabStrings, tabCopyOper,
		tabMemKind, tabEventType, tabMeta, tabGPU, tabCUDADev, tabEnv, tabThreads)
	return nil
}

// resolveTables maps each logical name to its highest-versioned table.
func resolveTables(names []string, logical ...string) map[string]string {
	return nsysdb.ResolveTables(names, logical...)
}

// columns returns the columns of the logical table, failing with an
// *inputerr.Error naming the first of the required columns it lacks.
func (r *sqliteReader) columns(logical string, required ...string) (map[string]bool, error) {
	table := r.tables[logical]
	rows, err := r.db.Query(`PRAGMA table_info(` + quoteIdent(table) + `)`)
	if err != nil {
		return nil, r.tableError(table, err)
	}
	defer rows.Close()
	cols := map[string]bool{}
	for rows.Next() {
		var (
			cid     int
			name    string
			typ     sql.NullString
			notnull int
			dflt    sql.NullString
			pk      int
		)
		if err := rows.Scan(&cid, &name, &typ, &notnull, &dflt, &pk); err != nil {
			return nil, r.tableError(table, err)
		}
		cols[name] = true
	}
	if err := rows.Err(); err != nil {
		return nil, r.tableError(table, err)
	}
	for _, col := range required {
		if !cols[col] {
			schema := r.schema
			if schema == "" {
				schema = "unknown"
			}
			return nil, &inputerr.Error{Path: r.path, Where: "table " + table,
				Problem: fmt.Sprintf("column %s is missing (export schema version %s)", col, schema),
				Hint:    "nsyscheck reads exports of Nsight Systems 2025.3 (schema " + nsysdb.KnownSchema + "); " + sqliteExportHint}
		}
	}
	return cols, nil
}

// quoteIdent quotes an SQL identifier (a table or column name read from the
// file's schema), doubling any double quote inside it.
func quoteIdent(name string) string { return nsysdb.QuoteIdent(name) }

// col returns the column expression for an optional integer column: the
// column with NULL read as 0, or 0 when the table has no such column.
func col(cols map[string]bool, name string) string {
	if cols[name] {
		return `ifnull(` + quoteIdent(name) + `, 0)`
	}
	return "0"
}

// str returns the string with the given StringIds id.
func (r *sqliteReader) str(id int64) (string, error) {
	if s, ok := r.strs[id]; ok {
		return s, nil
	}
	var s string
	err := r.strStmt.QueryRow(id).Scan(&s)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		s = fmt.Sprintf("<string %d not in %s>", id, tabStrings)
	case err != nil:
		return "", r.tableError(r.tables[tabStrings], err)
	}
	r.strs[id] = s
	return s, nil
}

// readMeta fills the metadata that META_DATA_EXPORT and TARGET_INFO_SYSTEM_ENV
// hold. Absent tables or rows leave fields empty.
func (r *sqliteReader) readMeta(c *Capture) {
	if t := r.tables[tabMeta]; t != "" {
		kv := r.nameValues(tabMeta, nsysdb.MetaProductVersion, nsysdb.MetaSchemaVersion)
		c.Meta.NsysVersion = kv[nsysdb.MetaProductVersion]
		c.Meta.SchemaVersion = kv[nsysdb.MetaSchemaVersion]
		r.schema = c.Meta.SchemaVersion
	}
	if t := r.tables[tabEnv]; t != "" {
		kv := r.nameValues(tabEnv, nsysdb.EnvDriver, nsysdb.EnvCUDADriver, nsysdb.EnvOS)
		c.Meta.Driver = kv[nsysdb.EnvDriver]
		c.Meta.CUDADriver = kv[nsysdb.EnvCUDADriver]
		c.Meta.OS = kv[nsysdb.EnvOS]
	}
}

// nameValues looks up rows by name in a (name, value) table. Errors leave
// the result empty: metadata is optional.
func (r *sqliteReader) nameValues(logical string, names ...string) map[string]string {
	out := map[string]string{}
	cols, err := r.columns(logical, nsysdb.ColName, nsysdb.ColValue)
	if err != nil || cols == nil {
		return out
	}
	ph := strings.TrimSuffix(strings.Repeat("?, ", len(names)), ", ")
	args := make([]any, len(names))
	for i, n := range names {
		args[i] = n
	}
	rows, err := r.db.Query(`SELECT `+quoteIdent(nsysdb.ColName)+`, ifnull(`+quoteIdent(nsysdb.ColValue)+`, '') FROM `+quoteIdent(r.tables[logical])+` WHERE `+quoteIdent(nsysdb.ColName)+` IN (`+ph+`)`, args...)
	if err != nil {
		return out
	}
	defer rows.Close()
	for rows.Next() {
		var n, v string
		if rows.Scan(&n, &v) == nil {
			if _, seen := out[n]; !seen {
				out[n] = strings.TrimSpace(v)
			}
		}
	}
	return out
}

// readEnum reads an ENUM_* table as id -> name.
func (r *sqliteReader) readEnum(logical string) (map[int64]string, error) {
	if _, err := r.columns(logical, nsysdb.ColID, nsysdb.ColName); err != nil {
		return nil, err
	}
	table := r.tables[logical]
	rows, err := r.db.Query(`SELECT ` + quoteIdent(nsysdb.ColID) + `, ifnull(` + quoteIdent(nsysdb.ColName) + `, '') FROM ` + quoteIdent(table))
	if err != nil {
		return nil, r.tableError(table, err)
	}
	defer rows.Close()
	out := map[int64]string{}
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, r.tableError(table, err)
		}
		out[id] = name
	}
	if err := rows.Err(); err != nil {
		return nil, r.tableError(table, err)
	}
	return out, nil
}

// splitGlobalID decodes nsys's global thread or process id.
func splitGlobalID(g int64) (pid, tid int64) { return nsysdb.SplitGlobalID(g) }

// stripAPIVersion removes a trailing _v<digits> from a CUDA API name
// (cudaMemcpy_v3020 -> cudaMemcpy).
func stripAPIVersion(name string) string {
	i := strings.LastIndex(name, "_v")
	if i <= 0 || i+2 == len(name) {
		return name
	}
	for _, ch := range name[i+2:] {
		if ch < '0' || ch > '9' {
			return name
		}
	}
	return name[:i]
}

// apiNameIDs returns the StringIds ids whose value is one of names, with or
// without a _vNNNN suffix.
func (r *sqliteReader) apiNameIDs(names []string) ([]int64, error) {
	want := map[string]bool{}
	var conds []string
	var args []any
	for _, n := range names {
		if n == "" || want[n] {
			continue
		}
		want[n] = true
		v := quoteIdent(nsysdb.ColValue)
		conds = append(conds, v+` = ? OR `+v+` LIKE ? || '\_v%' ESCAPE '\'`)
		args = append(args, n, likeEscape(n))
	}
	if len(conds) == 0 {
		return nil, nil
	}
	// LIKE ignores ASCII case and matches any suffix after _v: check exactly.
	return r.stringIDs(conds, args, func(id int64, v string) bool {
		if !want[stripAPIVersion(v)] {
			return false
		}
		r.strs[id] = v
		return true
	})
}

// stringIDs returns the StringIds ids whose value meets one of conds (SQL
// conditions on the value column, with args) and keep, which checks what
// LIKE cannot.
func (r *sqliteReader) stringIDs(conds []string, args []any, keep func(id int64, v string) bool) ([]int64, error) {
	table := r.tables[tabStrings]
	rows, err := r.db.Query(`SELECT `+nsysdb.Cols(nsysdb.ColID, nsysdb.ColValue)+` FROM `+quoteIdent(table)+` WHERE `+strings.Join(conds, " OR "), args...)
	if err != nil {
		return nil, r.tableError(table, err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		var v string
		if err := rows.Scan(&id, &v); err != nil {
			return nil, r.tableError(table, err)
		}
		if keep(id, v) {
			ids = append(ids, id)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, r.tableError(table, err)
	}
	return ids, nil
}

// likeEscape escapes LIKE wildcards with a backslash.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// runtimeFilter builds the WHERE conditions of the API-call query: the
// wanted API names and, with Options.ProgramThread, the program's thread.
// none is true when no call can match.
func (r *sqliteReader) runtimeFilter(c *Capture, table string, cols map[string]bool, gtidCol string) (conds []string, none bool, err error) {
	if len(r.opts.APINames) > 0 {
		ids, err := r.apiNameIDs(r.opts.APINames)
		if err != nil {
			return nil, false, err
		}
		if len(ids) == 0 {
			return nil, true, nil // none of the wanted APIs was ever called
		}
		conds = append(conds, quoteIdent(nsysdb.ColNameID)+` IN (`+intList(ids)+`)`)
	}
	if r.opts.ProgramThread && cols[nsysdb.ColGlobalTid] {
		gtids, err := r.programThread(c, table, gtidCol, conds)
		if err != nil {
			return nil, false, err
		}
		if len(gtids) == 0 {
			return nil, true, nil // no calls at all
		}
		conds = append(conds, gtidCol+` IN (`+intList(gtids)+`)`)
		r.threadOnly = true
	}
	return conds, false, nil
}

// readThreadNames maps global thread ids to names, where the export has them.
func (r *sqliteReader) readThreadNames() (map[int64]string, error) {
	out := map[int64]string{}
	table := r.tables[tabThreads]
	if table == "" {
		return out, nil
	}
	cols, err := r.columns(tabThreads)
	if err != nil {
		return nil, err
	}
	if !cols[nsysdb.ColNameID] || !cols[nsysdb.ColGlobalTid] {
		return out, nil
	}
	rows, err := r.db.Query(`SELECT ` + nsysdb.Cols(nsysdb.ColGlobalTid, nsysdb.ColNameID) + ` FROM ` + quoteIdent(table) + ` WHERE ` + quoteIdent(nsysdb.ColGlobalTid) + ` IS NOT NULL AND ` + quoteIdent(nsysdb.ColNameID) + ` IS NOT NULL`)
	if err != nil {
		return nil, r.tableError(table, err)
	}
	var pairs [][2]int64
	for rows.Next() {
		var p [2]int64
		if err := rows.Scan(&p[0], &p[1]); err != nil {
			rows.Close()
			return nil, r.tableError(table, err)
		}
		pairs = append(pairs, p)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return nil, r.tableError(table, err)
	}
	for _, p := range pairs {
		s, err := r.str(p[1])
		if err != nil {
			return nil, err
		}
		out[p[0]] = s
	}
	return out, nil
}

// readRuntime streams the CUDA API calls, only those named in
// opts.APINames when that is set, and only the program's thread's when
// opts.ProgramThread is set.
func (r *sqliteReader) readRuntime(c *Capture) error {
	table := r.tables[tabRuntime]
	cols, err := r.columns(tabRuntime, nsysdb.ColStart, nsysdb.ColEnd, nsysdb.ColNameID)
	if err != nil {
		return err
	}
	if !cols[nsysdb.ColCorrelationID] {
		c.Lack(FactCorrelation, fmt.Sprintf("table %s has no %s column", table, nsysdb.ColCorrelationID))
	}
	if !cols[nsysdb.ColGlobalTid] {
		c.Lack(FactProcessScope, fmt.Sprintf("table %s has no %s column", table, nsysdb.ColGlobalTid))
	}
	threads, err := r.readThreadNames()
	if err != nil {
		return err
	}

	gtidCol := col(cols, nsysdb.ColGlobalTid)
	conds, none, err := r.runtimeFilter(c, table, cols, gtidCol)
	if err != nil || none {
		return err
	}
	// No ORDER BY: Capture.Sort orders the calls, and sorting here would
	// make SQLite sort every matching row first.
	q := `SELECT ` + nsysdb.Cols(nsysdb.ColStart, nsysdb.ColEnd, nsysdb.ColNameID) + `, ` + col(cols, nsysdb.ColReturnValue) + `, ` + col(cols, nsysdb.ColCorrelationID) + `, ` +
		gtidCol + ` FROM ` + quoteIdent(table)
	if len(conds) > 0 {
		q += ` WHERE ` + strings.Join(conds, ` AND `)
	}

	rows, err := r.db.Query(q)
	if err != nil {
		return r.tableError(table, err)
	}
	defer rows.Close()
	return r.scanRuntime(c, table, rows, threads)
}

// scanRuntime appends the calls of readRuntime's query to c.Calls. Calls
// come in runs of one name and one thread, so the last name and thread are
// kept beside the maps that cache them.
func (r *sqliteReader) scanRuntime(c *Capture, table string, rows *sql.Rows, threads map[int64]string) error {
	names := map[int64]string{} // nameId -> name without version
	var (
		a             APICall
		nameID, gtid  int64
		lastID        = int64(-1)
		lastName      string
		lastGtid      = int64(-1)
		lastPID, lTID int64
		lastThread    string
	)
	for rows.Next() {
		a = APICall{}
		if err := rows.Scan(&a.Start, &a.End, &nameID, &a.Result, &a.CorrelationID, &gtid); err != nil {
			return r.tableError(table, err)
		}
		if nameID != lastID {
			name, ok := names[nameID]
			if !ok {
				s, err := r.str(nameID)
				if err != nil {
					return err
				}
				name = stripAPIVersion(s)
				names[nameID] = name
			}
			lastID, lastName = nameID, name
		}
		a.Name = lastName
		if gtid != 0 {
			if gtid != lastGtid {
				lastGtid = gtid
				lastPID, lTID = splitGlobalID(gtid)
				lastThread = threads[gtid]
			}
			a.PID, a.TID, a.Thread = lastPID, lTID, lastThread
		}
		if r.threadOnly {
			r.wantCorr[a.CorrelationID] = true
			if a.Name == "cudaLaunchKernel" {
				r.launches = true
			}
			r.pid = a.PID
		}
		c.Calls = append(c.Calls, a)
	}
	if err := rows.Err(); err != nil {
		return r.tableError(table, err)
	}
	return nil
}

// programThread picks the program's thread (see Options.ProgramThread) from
// the calls that conds select, counted per thread in one GROUP BY pass, and
// returns its global thread ids (one, unless ids differ only in the bits
// above the process id). The other threads' counts go to c.OtherThreads.
func (r *sqliteReader) programThread(c *Capture, table, gtidCol string, conds []string) ([]int64, error) {
	q := `SELECT ` + gtidCol + `, ` + quoteIdent(nsysdb.ColNameID) + `, count(*) FROM ` + quoteIdent(table)
	if len(conds) > 0 {
		q += ` WHERE ` + strings.Join(conds, ` AND `)
	}
	q += ` GROUP BY 1, 2`
	rows, err := r.db.Query(q)
	if err != nil {
		return nil, r.tableError(table, err)
	}
	type group struct{ gtid, nameID, n int64 }
	var groups []group
	for rows.Next() {
		var g group
		if err := rows.Scan(&g.gtid, &g.nameID, &g.n); err != nil {
			rows.Close()
			return nil, r.tableError(table, err)
		}
		groups = append(groups, g)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return nil, r.tableError(table, err)
	}
	at := map[[2]int64]int{}
	var counts []ThreadCount
	gtids := map[[2]int64][]int64{}
	for _, g := range groups {
		var pid, tid int64
		if g.gtid != 0 {
			pid, tid = splitGlobalID(g.gtid)
		}
		k := [2]int64{pid, tid}
		i, ok := at[k]
		if !ok {
			i = len(counts)
			at[k] = i
			counts = append(counts, ThreadCount{PID: pid, TID: tid})
		}
		s, err := r.str(g.nameID)
		if err != nil {
			return nil, err
		}
		counts[i].add(stripAPIVersion(s), int(g.n))
		if ids := gtids[k]; len(ids) == 0 || ids[len(ids)-1] != g.gtid {
			gtids[k] = append(ids, g.gtid)
		}
	}
	if len(counts) == 0 {
		return nil, nil
	}
	sortThreads(counts)
	me := counts[0]
	if len(counts) > 1 {
		c.OtherThreads = counts[1:]
	}
	return gtids[[2]int64{me.PID, me.TID}], nil
}

// intList writes integers as a comma-separated SQL list.
func intList(ids []int64) string {
	b := make([]byte, 0, 8*len(ids))
	for i, id := range ids {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(b)
}

// corrFilter returns the SQL condition that keeps the GPU records of a table
// whose correlation ids belong to the loaded calls, or "" when everything is
// to be read (every thread loaded, or no correlation ids to go by). Short
// lists go into the SQL; wantsCorr filters longer ones while reading.
func (r *sqliteReader) corrFilter(cols map[string]bool) string {
	if !r.threadOnly || !cols[nsysdb.ColCorrelationID] || len(r.wantCorr) > maxSQLList {
		return ""
	}
	ids := make([]int64, 0, len(r.wantCorr))
	for id := range r.wantCorr {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	if len(ids) == 0 {
		return ` WHERE 0`
	}
	return ` WHERE ` + quoteIdent(nsysdb.ColCorrelationID) + ` IN (` + intList(ids) + `)`
}

// maxSQLList bounds the ids written into one SQL statement.
const maxSQLList = 100000

// wantsCorr reports whether a GPU record with this correlation id is to be
// kept (see corrFilter).
func (r *sqliteReader) wantsCorr(cols map[string]bool, corr int64) bool {
	return !r.threadOnly || !cols[nsysdb.ColCorrelationID] || r.wantCorr[corr]
}

// copyKindByName maps ENUM_CUDA_MEMCPY_OPER names to copy kinds.
func copyKindByName(name string) CopyKind { return nsysdb.CopyKindOf(name) }

// memKindByName maps ENUM_CUDA_MEM_KIND names to memory kinds.
func memKindByName(name string) MemKind { return nsysdb.MemKindOf(name) }

// copyEnumsOf names a copy row's direction and the memory kinds of its two
// sides from their enum ids, CopyUnknown and MemUnknown for an id the
// export's enum tables do not name. The loader and the audit's copy join
// both decode their rows with it.
func copyEnumsOf(kinds map[int64]CopyKind, memKinds map[int64]MemKind, kind, src, dst int64) (CopyKind, MemKind, MemKind) {
	k, ok := kinds[kind]
	if !ok {
		k = CopyUnknown
	}
	sk, ok := memKinds[src]
	if !ok {
		sk = MemUnknown
	}
	dk, ok := memKinds[dst]
	if !ok {
		dk = MemUnknown
	}
	return k, sk, dk
}

func (r *sqliteReader) lackMemcpy(c *Capture, reason string) {
	c.Lack(FactMemcpy, reason)
	c.Lack(FactMemcpyBytes, reason)
	c.Lack(FactMemoryKinds, reason)
}

// copyEnums reads the copy directions and, where the export has them, the
// memory kinds of copies; haveMemKinds is false (and the fact recorded as
// missing) where it has not.
func (r *sqliteReader) copyEnums(c *Capture, table string, cols map[string]bool) (kinds map[int64]CopyKind, memKinds map[int64]MemKind, haveMemKinds bool, err error) {
	if r.tables[tabCopyOper] == "" {
		return nil, nil, false, &inputerr.Error{Path: r.path, Where: "table " + tabCopyOper,
			Problem: "the export has memory copies but no " + tabCopyOper + " table to tell their directions",
			Hint:    sqliteExportHint}
	}
	opers, err := r.readEnum(tabCopyOper)
	if err != nil {
		return nil, nil, false, err
	}
	kinds = map[int64]CopyKind{}
	for id, n := range opers {
		kinds[id] = copyKindByName(n)
	}
	memKinds = map[int64]MemKind{}
	haveMemKinds = cols[nsysdb.ColSrcKind] && cols[nsysdb.ColDstKind]
	switch {
	case !haveMemKinds:
		c.Lack(FactMemoryKinds, fmt.Sprintf("table %s has no %s/%s columns; export with Nsight Systems 2025.3 or newer", table, nsysdb.ColSrcKind, nsysdb.ColDstKind))
	case r.tables[tabMemKind] == "":
		haveMemKinds = false
		c.Lack(FactMemoryKinds, fmt.Sprintf("the export has no %s table to name the memory kinds of copies", tabMemKind))
	default:
		mk, err := r.readEnum(tabMemKind)
		if err != nil {
			return nil, nil, false, err
		}
		for id, n := range mk {
			memKinds[id] = memKindByName(n)
		}
	}
	return kinds, memKinds, haveMemKinds, nil
}

// readMemcpy reads the GPU memory-copy records.
func (r *sqliteReader) readMemcpy(c *Capture) error {
	table := r.tables[tabMemcpy]
	if table == "" {
		r.lackMemcpy(c, fmt.Sprintf("the export has no %s table: the run made no memory copies, or was not profiled with CUDA tracing (nsys profile -t cuda,nvtx)", tabMemcpy))
		return nil
	}
	cols, err := r.columns(tabMemcpy, nsysdb.ColStart, nsysdb.ColEnd, nsysdb.ColBytes, nsysdb.ColCopyKind)
	if err != nil {
		return err
	}
	kinds, memKinds, haveMemKinds, err := r.copyEnums(c, table, cols)
	if err != nil {
		return err
	}
	if !cols[nsysdb.ColCorrelationID] {
		c.Lack(FactCorrelation, fmt.Sprintf("table %s has no %s column", table, nsysdb.ColCorrelationID))
	}
	src, dst := "-1", "-1"
	if haveMemKinds {
		src, dst = `ifnull(`+quoteIdent(nsysdb.ColSrcKind)+`, -1)`, `ifnull(`+quoteIdent(nsysdb.ColDstKind)+`, -1)`
	}
	q := `SELECT ` + nsysdb.Cols(nsysdb.ColStart, nsysdb.ColEnd, nsysdb.ColBytes, nsysdb.ColCopyKind) + `, ` + src + `, ` + dst + `, ` + col(cols, nsysdb.ColCorrelationID) + `, ` +
		col(cols, nsysdb.ColStreamID) + `, ` + col(cols, nsysdb.ColDeviceID) + `, ` + col(cols, nsysdb.ColGlobalPid) +
		` FROM ` + quoteIdent(table) + r.corrFilter(cols)
	rows, err := r.db.Query(q)
	if err != nil {
		return r.tableError(table, err)
	}
	defer rows.Close()
	var (
		m                  Memcpy
		kind, sk, dk, gpid int64
	)
	for rows.Next() {
		m = Memcpy{}
		if err := rows.Scan(&m.Start, &m.End, &m.Bytes, &kind, &sk, &dk, &m.CorrelationID, &m.Stream, &m.Device, &gpid); err != nil {
			return r.tableError(table, err)
		}
		if !r.wantsCorr(cols, m.CorrelationID) {
			continue
		}
		m.Kind, m.Src, m.Dst = copyEnumsOf(kinds, memKinds, kind, sk, dk)
		if gpid != 0 {
			m.PID, _ = splitGlobalID(gpid)
		}
		if cols[nsysdb.ColDeviceID] {
			r.devices[m.Device] = true
		}
		c.Memcpys = append(c.Memcpys, m)
	}
	if err := rows.Err(); err != nil {
		return r.tableError(table, err)
	}
	return nil
}

// readKernels reads the kernel launch records.
func (r *sqliteReader) readKernels(c *Capture) error {
	table := r.tables[tabKernel]
	if table == "" {
		c.Lack(FactKernels, fmt.Sprintf("the export has no %s table: the run launched no kernels, or was not profiled with CUDA tracing (nsys profile -t cuda,nvtx)", tabKernel))
		return nil
	}
	cols, err := r.columns(tabKernel, nsysdb.ColStart, nsysdb.ColEnd, nsysdb.ColShortName)
	if err != nil {
		return err
	}
	q := `SELECT ` + nsysdb.Cols(nsysdb.ColStart, nsysdb.ColEnd, nsysdb.ColShortName) + `, ` + col(cols, nsysdb.ColCorrelationID) + `, ` + col(cols, nsysdb.ColStreamID) + `, ` +
		col(cols, nsysdb.ColGlobalPid) + `, ` + col(cols, nsysdb.ColDeviceID) + ` FROM ` + quoteIdent(table)
	// Kernels belong to the loaded calls through cudaLaunchKernel's
	// correlation ids; a thread that launched none through it keeps its
	// process's kernels, as the predictions read them then.
	byCorr := !r.threadOnly || r.launches
	if byCorr {
		q += r.corrFilter(cols)
	}
	rows, err := r.db.Query(q)
	if err != nil {
		return r.tableError(table, err)
	}
	defer rows.Close()
	var (
		k                 Kernel
		nameID, gpid, dev int64
	)
	for rows.Next() {
		k = Kernel{}
		if err := rows.Scan(&k.Start, &k.End, &nameID, &k.CorrelationID, &k.Stream, &gpid, &dev); err != nil {
			return r.tableError(table, err)
		}
		if gpid != 0 {
			k.PID, _ = splitGlobalID(gpid)
		}
		if byCorr {
			if !r.wantsCorr(cols, k.CorrelationID) {
				continue
			}
		} else if k.PID != r.pid && k.PID != 0 && r.pid != 0 {
			continue
		}
		if k.Name, err = r.str(nameID); err != nil {
			return err
		}
		if cols[nsysdb.ColDeviceID] {
			r.devices[dev] = true
		}
		c.Kernels = append(c.Kernels, k)
	}
	if err := rows.Err(); err != nil {
		return r.tableError(table, err)
	}
	return nil
}

// readNVTX reads NVTX push/pop ranges: the event types that tell them,
// the domains' names, then the ranges in start order.
func (r *sqliteReader) readNVTX(c *Capture) error {
	table := r.tables[tabNVTX]
	lack := func(reason string) {
		c.Lack(FactNVTX, reason)
		c.Lack(FactNVTXSummary, reason)
	}
	if table == "" {
		lack(fmt.Sprintf("the export has no %s table: the program pushed no NVTX ranges, or was not profiled with NVTX tracing (nsys profile -t cuda,nvtx)", tabNVTX))
		return nil
	}
	cols, err := r.columns(tabNVTX, nsysdb.ColStart, nsysdb.ColEnd, nsysdb.ColEventType)
	if err != nil {
		return err
	}
	if !cols[nsysdb.ColText] && !cols[nsysdb.ColTextID] {
		if _, err := r.columns(tabNVTX, nsysdb.ColText); err != nil {
			return err
		}
	}
	pushPop, domainCreate, why, err := r.nvtxEventTypes()
	if err != nil || why != "" {
		if why != "" {
			lack(why)
		}
		return err
	}
	text, textID := "NULL", "NULL"
	if cols[nsysdb.ColText] {
		text = quoteIdent(nsysdb.ColText)
	}
	if cols[nsysdb.ColTextID] {
		textID = quoteIdent(nsysdb.ColTextID)
	}
	domains := map[int64]string{}
	if domainCreate >= 0 && cols[nsysdb.ColDomainID] {
		if domains, err = r.readNVTXDomains(table, text, textID, domainCreate); err != nil {
			return err
		}
	}
	return r.readNVTXRanges(c, table, cols, text, textID, pushPop, domains)
}

// nvtxEventTypes finds the event type ids of push/pop ranges and of domain
// creation (-1 when the export has none); why says why the export cannot
// tell push/pop ranges from other NVTX events.
func (r *sqliteReader) nvtxEventTypes() (pushPop, domainCreate int64, why string, err error) {
	if r.tables[tabEventType] == "" {
		return -1, -1, fmt.Sprintf("the export has no %s table, so push/pop ranges cannot be told from other NVTX events", tabEventType), nil
	}
	types, err := r.readEnum(tabEventType)
	if err != nil {
		return -1, -1, "", err
	}
	pushPop, domainCreate = -1, -1
	for id, n := range types {
		switch n {
		case nsysdb.EventPushPopRange:
			pushPop = id
		case "NvtxDomainCreate":
			domainCreate = id
		}
	}
	if pushPop < 0 {
		return -1, -1, fmt.Sprintf("%s has no %s event type", r.tables[tabEventType], nsysdb.EventPushPopRange), nil
	}
	return pushPop, domainCreate, "", nil
}

// nvtxText is an NVTX event's text as the export stores it: inline, or an
// id into the string table.
type nvtxText struct {
	text sql.NullString
	id   sql.NullInt64
}

// name is the text, looked up in the string table where it is an id.
func (r *sqliteReader) name(t nvtxText) (string, error) {
	if !t.text.Valid && t.id.Valid {
		return r.str(t.id.Int64)
	}
	return t.text.String, nil
}

// readNVTXDomains names the NVTX domains by id, from their creation
// events. The rows are read before the string table is asked for names,
// so that one query is open at a time.
func (r *sqliteReader) readNVTXDomains(table, text, textID string, domainCreate int64) (map[int64]string, error) {
	rows, err := r.db.Query(`SELECT `+quoteIdent(nsysdb.ColDomainID)+`, `+text+`, `+textID+` FROM `+quoteIdent(table)+` WHERE `+quoteIdent(nsysdb.ColEventType)+` = ?`, domainCreate)
	if err != nil {
		return nil, r.tableError(table, err)
	}
	type dom struct {
		id sql.NullInt64
		t  nvtxText
	}
	var ds []dom
	for rows.Next() {
		var d dom
		if err := rows.Scan(&d.id, &d.t.text, &d.t.id); err != nil {
			rows.Close()
			return nil, r.tableError(table, err)
		}
		ds = append(ds, d)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return nil, r.tableError(table, err)
	}
	domains := map[int64]string{}
	for _, d := range ds {
		if !d.id.Valid {
			continue
		}
		if domains[d.id.Int64], err = r.name(d.t); err != nil {
			return nil, err
		}
	}
	return domains, nil
}

// readNVTXRanges reads the push/pop ranges in start order, a range without
// an end being still open; as readNVTXDomains, it reads every row before
// it looks names up.
func (r *sqliteReader) readNVTXRanges(c *Capture, table string, cols map[string]bool, text, textID string, pushPop int64, domains map[int64]string) error {
	q := `SELECT ` + nsysdb.Cols(nsysdb.ColStart, nsysdb.ColEnd) + `, ` + text + `, ` + textID + `, ` + col(cols, nsysdb.ColGlobalTid) + `, ` + col(cols, nsysdb.ColDomainID) +
		` FROM ` + quoteIdent(table) + ` WHERE ` + quoteIdent(nsysdb.ColEventType) + ` = ? ORDER BY ` + quoteIdent(nsysdb.ColStart)
	rows, err := r.db.Query(q, pushPop)
	if err != nil {
		return r.tableError(table, err)
	}
	type raw struct {
		rg  Range
		t   nvtxText
		dom int64
	}
	var raws []raw
	for rows.Next() {
		var x raw
		var end sql.NullInt64
		var gtid int64
		if err := rows.Scan(&x.rg.Start, &end, &x.t.text, &x.t.id, &gtid, &x.dom); err != nil {
			rows.Close()
			return r.tableError(table, err)
		}
		if end.Valid {
			x.rg.End = end.Int64
		} else {
			x.rg.Open = true
		}
		if gtid != 0 {
			x.rg.PID, x.rg.TID = splitGlobalID(gtid)
		}
		raws = append(raws, x)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return r.tableError(table, err)
	}
	for _, x := range raws {
		rg := x.rg
		if rg.Name, err = r.name(x.t); err != nil {
			return err
		}
		rg.Domain = domains[x.dom]
		c.Ranges = append(c.Ranges, rg)
	}
	return nil
}

// readGPU names the GPU(s) the copies and kernels ran on.
func (r *sqliteReader) readGPU(c *Capture) error {
	table := r.tables[tabGPU]
	if table == "" {
		return nil
	}
	cols, err := r.columns(tabGPU)
	if err != nil {
		return err
	}
	if !cols[nsysdb.ColName] {
		return nil
	}
	// CUDA device id -> GPU id, from TARGET_INFO_CUDA_DEVICE where present,
	// else TARGET_INFO_GPU.cuDevice.
	cudaToGPU, err := r.readCUDADevices()
	if err != nil {
		return err
	}
	rows, err := r.db.Query(`SELECT ` + col(cols, nsysdb.ColID) + `, ` + col(cols, nsysdb.ColCUDADevice) + `, ifnull(` + quoteIdent(nsysdb.ColName) + `, '') FROM ` + quoteIdent(table))
	if err != nil {
		return r.tableError(table, err)
	}
	defer rows.Close()
	byGPU := map[int64]string{}
	byCUDA := map[int64]string{}
	all := map[string]bool{}
	for rows.Next() {
		var id, cu int64
		var name string
		if err := rows.Scan(&id, &cu, &name); err != nil {
			return r.tableError(table, err)
		}
		if name == "" {
			continue
		}
		byGPU[id] = name
		if cols[nsysdb.ColCUDADevice] {
			byCUDA[cu] = name
		}
		all[name] = true
	}
	if err := rows.Err(); err != nil {
		return r.tableError(table, err)
	}
	used := map[string]bool{}
	for dev := range r.devices {
		if g, ok := cudaToGPU[dev]; ok && byGPU[g] != "" {
			used[byGPU[g]] = true
		} else if n := byCUDA[dev]; n != "" {
			used[n] = true
		}
	}
	if len(used) == 0 {
		used = all
	}
	names := make([]string, 0, len(used))
	for n := range used {
		names = append(names, n)
	}
	sort.Strings(names)
	c.Meta.GPU = strings.Join(names, ", ")
	return nil
}

// readCUDADevices maps CUDA device ids to GPU ids from
// TARGET_INFO_CUDA_DEVICE; empty where the export has no such table.
func (r *sqliteReader) readCUDADevices() (map[int64]int64, error) {
	cudaToGPU := map[int64]int64{}
	if t := r.tables[tabCUDADev]; t != "" {
		dc, err := r.columns(tabCUDADev)
		if err != nil {
			return nil, err
		}
		if dc[nsysdb.ColGPUID] && dc[nsysdb.ColCUDAID] {
			rows, err := r.db.Query(`SELECT ` + nsysdb.Cols(nsysdb.ColCUDAID, nsysdb.ColGPUID) + ` FROM ` + quoteIdent(t) + ` WHERE ` + quoteIdent(nsysdb.ColCUDAID) + ` IS NOT NULL AND ` + quoteIdent(nsysdb.ColGPUID) + ` IS NOT NULL`)
			if err != nil {
				return nil, r.tableError(t, err)
			}
			for rows.Next() {
				var cu, g int64
				if err := rows.Scan(&cu, &g); err != nil {
					rows.Close()
					return nil, r.tableError(t, err)
				}
				cudaToGPU[cu] = g
			}
			err = rows.Err()
			rows.Close()
			if err != nil {
				return nil, r.tableError(t, err)
			}
		}
	}
	return cudaToGPU, nil
}
