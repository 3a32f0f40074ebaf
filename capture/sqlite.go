package capture

import (
	"bytes"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	_ "github.com/mattn/go-sqlite3" // SQLite driver for database/sql
)

// sqliteMagic is the 16-byte header every SQLite 3 database file starts with.
const sqliteMagic = "SQLite format 3\x00"

// sqliteExportHint tells the user how to make a fresh SQLite export.
const sqliteExportHint = "export it again with: nsys export --type sqlite -o FILE.sqlite REPORT.nsys-rep"

// The logical Nsight Systems export tables nsyscheck reads. Newer exports may
// name a table with a _V2, _V3, ... suffix; resolveTable picks the highest.
const (
	tabRuntime   = "CUPTI_ACTIVITY_KIND_RUNTIME"
	tabMemcpy    = "CUPTI_ACTIVITY_KIND_MEMCPY"
	tabKernel    = "CUPTI_ACTIVITY_KIND_KERNEL"
	tabNVTX      = "NVTX_EVENTS"
	tabStrings   = "StringIds"
	tabCopyOper  = "ENUM_CUDA_MEMCPY_OPER"
	tabMemKind   = "ENUM_CUDA_MEM_KIND"
	tabEventType = "ENUM_NSYS_EVENT_TYPE"
	tabMeta      = "META_DATA_EXPORT"
	tabGPU       = "TARGET_INFO_GPU"
	tabCUDADev   = "TARGET_INFO_CUDA_DEVICE"
	tabEnv       = "TARGET_INFO_SYSTEM_ENV"
	tabThreads   = "ThreadNames"
)

// LoadSQLite reads an Nsight Systems SQLite export (nsys export --type
// sqlite) into a Capture. The file is opened read-only and never modified.
//
// Tables an export leaves out because they would be empty (memory copies,
// kernels, NVTX) are recorded as missing facts; a missing CUDA API trace or
// string table is an error. API summaries are not computed: they can be
// derived from Calls.
func LoadSQLite(path string, opts Options) (*Capture, error) {
	if err := checkSQLiteFile(path); err != nil {
		return nil, err
	}
	f, _, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	db, cleanup, err := openSQLite(path, f)
	defer cleanup()
	if err != nil {
		if IsInputError(err) {
			return nil, err
		}
		return nil, &InputError{Path: path, Problem: "cannot open the SQLite export", Err: err, Hint: sqliteExportHint}
	}
	defer db.Close()
	if err := sqliteIntegrity(db, path); err != nil {
		return nil, err
	}

	r := &sqliteReader{db: db, path: path, opts: opts, strs: map[int64]string{}, devices: map[int64]bool{},
		wantCorr: map[int64]bool{}}
	defer r.close()
	c := &Capture{Path: path, Format: FormatSQLite, Files: []string{path}}
	if err := r.load(c); err != nil {
		return nil, err
	}
	c.Sort()
	if err := validate(c); err != nil {
		return nil, err
	}
	return c, nil
}

// sqliteReadOnlyDSN builds a go-sqlite3 URI that opens path read-only and
// immutable, so that SQLite neither writes nor creates anything beside it.
// Characters that mean something in a URI ('?', '#', '%', spaces, quotes)
// are percent-escaped.
func sqliteReadOnlyDSN(path string) string {
	return SQLiteURI(path, "mode=ro&immutable=1")
}

// SQLiteURI is the SQLite URI of the file at path (made absolute, every
// character SQLite could read specially escaped) with the given query, e.g.
// "mode=ro&immutable=1" or "mode=rw"; an empty query adds none.
func SQLiteURI(path, query string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	// url.URL leaves a few characters SQLite would read specially as they are.
	p := u.EscapedPath()
	p = strings.ReplaceAll(p, "'", "%27")
	if query == "" {
		return "file:" + p
	}
	return "file:" + p + "?" + query
}

// checkSQLiteFile makes sure path is a complete SQLite 3 database before
// SQLite itself sees it, so that an empty, zero-filled, foreign or truncated
// file gets a clear error instead of an obscure one (or an empty model).
func checkSQLiteFile(path string) error {
	fail := func(problem, hint string, err error) error {
		return &InputError{Path: path, Problem: problem, Hint: hint, Err: err}
	}
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return fail("is a folder, not an Nsight Systems SQLite export", "give the .sqlite file itself", nil)
	}
	f, info, err := OpenRegular(path)
	if err != nil {
		return err
	}
	defer f.Close()
	size := info.Size()
	if size == 0 {
		return fail("the file is empty, not an Nsight Systems SQLite export", sqliteExportHint, nil)
	}
	head := make([]byte, 100)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return fail("cannot read the file", "", err)
	}
	head = head[:n]
	if n < len(sqliteMagic) || string(head[:len(sqliteMagic)]) != sqliteMagic {
		switch {
		case len(bytes.Trim(head, "\x00")) == 0:
			return fail("the file holds only zero bytes, not an SQLite database (an interrupted copy or download?)", sqliteExportHint, nil)
		case bytes.HasPrefix(head, []byte("NVIDIA")):
			return fail("this is an Nsight Systems report (.nsys-rep), not its SQLite export",
				"give it a .nsys-rep name so nsyscheck exports it, or "+sqliteExportHint, nil)
		case n < len(sqliteMagic) && strings.HasPrefix(sqliteMagic, string(head)):
			return fail(fmt.Sprintf("the file is truncated: it holds only %d bytes", size), sqliteExportHint, nil)
		default:
			return fail("not an SQLite database (the file does not start with the SQLite header)", sqliteExportHint, nil)
		}
	}
	if n < 100 {
		return fail(fmt.Sprintf("the file is truncated: it holds only %d bytes, less than an SQLite header", size), sqliteExportHint, nil)
	}
	pageSize := int64(binary.BigEndian.Uint16(head[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	if pageSize < 512 || pageSize&(pageSize-1) != 0 {
		return fail(fmt.Sprintf("the SQLite header is damaged (page size %d)", pageSize), sqliteExportHint, nil)
	}
	// The page count at offset 28 is valid when the change counter (24)
	// matches the version-valid-for number (92).
	pages := int64(binary.BigEndian.Uint32(head[28:32]))
	if pages > 0 && bytes.Equal(head[24:28], head[92:96]) {
		if want := pages * pageSize; size < want {
			return fail(fmt.Sprintf("the file is truncated: its header says %d bytes but it holds %d", want, size),
				"copy it again, or "+sqliteExportHint, nil)
		}
	} else if size%pageSize != 0 {
		return fail(fmt.Sprintf("the file is truncated: %d bytes is not a whole number of %d-byte pages", size, pageSize),
			"copy it again, or "+sqliteExportHint, nil)
	}
	return nil
}

// sqliteReader holds the state of one LoadSQLite call.
type sqliteReader struct {
	db     *sql.DB
	path   string
	opts   Options
	schema string            // EXPORT_SCHEMA_VERSION, "" if unknown
	tables map[string]string // logical name -> table name in the file

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
	var ie *InputError
	if errors.As(err, &ie) {
		return err
	}
	return &InputError{Path: r.path, Where: "table " + table, Problem: "cannot read the table", Err: err,
		Hint: "the file may be damaged or truncated; " + sqliteExportHint}
}

func (r *sqliteReader) load(c *Capture) error {
	if err := r.readTables(); err != nil {
		return err
	}
	r.readMeta(c)

	if r.tables[tabRuntime] == "" {
		return &InputError{Path: r.path, Where: "table " + tabRuntime,
			Problem: "no CUDA API trace in this export",
			Hint:    "profile with nsys profile -t cuda,nvtx and export again"}
	}
	if r.tables[tabStrings] == "" {
		return &InputError{Path: r.path, Where: "table " + tabStrings,
			Problem: "no string table (StringIds) in this export, so API, kernel and range names cannot be read",
			Hint:    sqliteExportHint}
	}
	if _, err := r.columns(tabStrings, "id", "value"); err != nil {
		return err
	}
	st, err := r.db.Prepare(`SELECT value FROM ` + quoteIdent(r.tables[tabStrings]) + ` WHERE id = ?`)
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
		return &InputError{Path: r.path, Problem: "cannot read the database schema", Err: err,
			Hint: "the file may be damaged or truncated; " + sqliteExportHint}
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return &InputError{Path: r.path, Problem: "cannot read the database schema", Err: err, Hint: sqliteExportHint}
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		return &InputError{Path: r.path, Problem: "cannot read the database schema", Err: err,
			Hint: "the file may be damaged or truncated; " + sqliteExportHint}
	}
	if len(names) == 0 {
		return &InputError{Path: r.path, Problem: "the SQLite database holds no tables, so it is not an Nsight Systems export", Hint: sqliteExportHint}
	}
	r.tables = resolveTables(names, tabRuntime, tabMemcpy, tabKernel, tabNVTX, tabStrings, tabCopyOper,
		tabMemKind, tabEventType, tabMeta, tabGPU, tabCUDADev, tabEnv, tabThreads)
	return nil
}

// resolveTables maps each logical name to the table in names that is either
// that name (version 1) or that name with the highest _V<n> suffix.
func resolveTables(names []string, logical ...string) map[string]string {
	out := make(map[string]string, len(logical))
	best := make(map[string]int, len(logical))
	for _, base := range logical {
		for _, n := range names {
			v := 0
			switch {
			case n == base:
				v = 1
			case strings.HasPrefix(n, base+"_V"):
				k, err := strconv.Atoi(n[len(base)+2:])
				if err != nil || k < 1 || strings.HasPrefix(n[len(base)+2:], "+") {
					continue
				}
				v = k
			default:
				continue
			}
			if v > best[base] {
				best[base], out[base] = v, n
			}
		}
	}
	return out
}

// columns returns the columns of the logical table, failing with an
// *InputError naming the first of the required columns it lacks.
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
			return nil, &InputError{Path: r.path, Where: "table " + table,
				Problem: fmt.Sprintf("column %s is missing (export schema version %s)", col, schema),
				Hint:    "nsyscheck reads exports of Nsight Systems 2025.3 (schema 3.20.3); " + sqliteExportHint}
		}
	}
	return cols, nil
}

// quoteIdent quotes an SQL identifier (a table or column name read from the
// file's schema), doubling any double quote inside it.
func quoteIdent(name string) string { return QuoteIdent(name) }

// QuoteIdent quotes a table or column name read from a file for use in SQL,
// doubling any quote inside it.
func QuoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

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
		kv := r.nameValues(tabMeta, "EXPORT_PRODUCT_VERSION", "EXPORT_SCHEMA_VERSION")
		c.Meta.NsysVersion = kv["EXPORT_PRODUCT_VERSION"]
		c.Meta.SchemaVersion = kv["EXPORT_SCHEMA_VERSION"]
		r.schema = c.Meta.SchemaVersion
	}
	if t := r.tables[tabEnv]; t != "" {
		kv := r.nameValues(tabEnv, "NvDriverVersion", "CudaDriverVersion", "OsDescription")
		c.Meta.Driver = kv["NvDriverVersion"]
		c.Meta.CUDADriver = kv["CudaDriverVersion"]
		c.Meta.OS = kv["OsDescription"]
	}
}

// nameValues looks up rows by name in a (name, value) table. Errors leave
// the result empty: metadata is optional.
func (r *sqliteReader) nameValues(logical string, names ...string) map[string]string {
	out := map[string]string{}
	cols, err := r.columns(logical, "name", "value")
	if err != nil || cols == nil {
		return out
	}
	ph := strings.TrimSuffix(strings.Repeat("?, ", len(names)), ", ")
	args := make([]any, len(names))
	for i, n := range names {
		args[i] = n
	}
	rows, err := r.db.Query(`SELECT name, ifnull(value, '') FROM `+quoteIdent(r.tables[logical])+` WHERE name IN (`+ph+`)`, args...)
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
	if _, err := r.columns(logical, "id", "name"); err != nil {
		return nil, err
	}
	table := r.tables[logical]
	rows, err := r.db.Query(`SELECT id, ifnull(name, '') FROM ` + quoteIdent(table))
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

// splitGlobalID decodes nsys's global thread or process id:
// pid in bits 24..47, tid in bits 0..23.
func splitGlobalID(g int64) (pid, tid int64) {
	return (g >> 24) & 0xFFFFFF, g & 0xFFFFFF
}

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
	table := r.tables[tabStrings]
	want := map[string]bool{}
	var conds []string
	var args []any
	for _, n := range names {
		if n == "" || want[n] {
			continue
		}
		want[n] = true
		conds = append(conds, `value = ? OR value LIKE ? || '\_v%' ESCAPE '\'`)
		args = append(args, n, likeEscape(n))
	}
	if len(conds) == 0 {
		return nil, nil
	}
	rows, err := r.db.Query(`SELECT id, value FROM `+quoteIdent(table)+` WHERE `+strings.Join(conds, " OR "), args...)
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
		// LIKE ignores ASCII case and matches any suffix after _v: check exactly.
		if s := stripAPIVersion(v); want[s] {
			ids = append(ids, id)
			r.strs[id] = v
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
	if !cols["nameId"] || !cols["globalTid"] {
		return out, nil
	}
	rows, err := r.db.Query(`SELECT globalTid, nameId FROM ` + quoteIdent(table) + ` WHERE globalTid IS NOT NULL AND nameId IS NOT NULL`)
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
	cols, err := r.columns(tabRuntime, "start", "end", "nameId")
	if err != nil {
		return err
	}
	if !cols["correlationId"] {
		c.Lack(FactCorrelation, fmt.Sprintf("table %s has no correlationId column", table))
	}
	if !cols["globalTid"] {
		c.Lack(FactProcessScope, fmt.Sprintf("table %s has no globalTid column", table))
	}
	threads, err := r.readThreadNames()
	if err != nil {
		return err
	}

	var conds []string
	if len(r.opts.APINames) > 0 {
		ids, err := r.apiNameIDs(r.opts.APINames)
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil // none of the wanted APIs was ever called
		}
		conds = append(conds, `nameId IN (`+intList(ids)+`)`)
	}
	gtidCol := col(cols, "globalTid")
	if r.opts.ProgramThread && cols["globalTid"] {
		gtids, err := r.programThread(c, table, gtidCol, conds)
		if err != nil {
			return err
		}
		if len(gtids) == 0 {
			return nil // no calls at all
		}
		conds = append(conds, gtidCol+` IN (`+intList(gtids)+`)`)
		r.threadOnly = true
	}
	// No ORDER BY: Capture.Sort orders the calls, and sorting here would
	// make SQLite sort every matching row first.
	q := `SELECT start, "end", nameId, ` + col(cols, "returnValue") + `, ` + col(cols, "correlationId") + `, ` +
		gtidCol + ` FROM ` + quoteIdent(table)
	if len(conds) > 0 {
		q += ` WHERE ` + strings.Join(conds, ` AND `)
	}

	rows, err := r.db.Query(q)
	if err != nil {
		return r.tableError(table, err)
	}
	defer rows.Close()
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
	q := `SELECT ` + gtidCol + `, nameId, count(*) FROM ` + quoteIdent(table)
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
	if !r.threadOnly || !cols["correlationId"] || len(r.wantCorr) > maxSQLList {
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
	return ` WHERE correlationId IN (` + intList(ids) + `)`
}

// maxSQLList bounds the ids written into one SQL statement.
const maxSQLList = 100000

// wantsCorr reports whether a GPU record with this correlation id is to be
// kept (see corrFilter).
func (r *sqliteReader) wantsCorr(cols map[string]bool, corr int64) bool {
	return !r.threadOnly || !cols["correlationId"] || r.wantCorr[corr]
}

// copyKindByName maps ENUM_CUDA_MEMCPY_OPER names to copy kinds.
func copyKindByName(name string) CopyKind {
	switch strings.TrimPrefix(strings.ToUpper(name), "CUDA_MEMCPY_KIND_") {
	case "HTOD":
		return CopyHtoD
	case "DTOH":
		return CopyDtoH
	case "DTOD":
		return CopyDtoD
	case "HTOH":
		return CopyHtoH
	case "PTOP":
		return CopyPtoP
	case "UNKNOWN", "":
		return CopyUnknown
	}
	return CopyOther
}

// memKindByName maps ENUM_CUDA_MEM_KIND names to memory kinds.
func memKindByName(name string) MemKind {
	switch strings.TrimPrefix(strings.ToUpper(name), "CUDA_MEMOPR_MEMORY_KIND_") {
	case "PAGEABLE":
		return MemPageable
	case "PINNED":
		return MemPinned
	case "DEVICE", "DEVICE_STATIC":
		return MemDevice
	case "ARRAY":
		return MemArray
	case "MANAGED", "MANAGED_STATIC":
		return MemManaged
	}
	return MemUnknown
}

func (r *sqliteReader) lackMemcpy(c *Capture, reason string) {
	c.Lack(FactMemcpy, reason)
	c.Lack(FactMemcpyBytes, reason)
	c.Lack(FactMemoryKinds, reason)
}

// readMemcpy reads the GPU memory-copy records.
func (r *sqliteReader) readMemcpy(c *Capture) error {
	table := r.tables[tabMemcpy]
	if table == "" {
		r.lackMemcpy(c, fmt.Sprintf("the export has no %s table: the run made no memory copies, or was not profiled with CUDA tracing (nsys profile -t cuda,nvtx)", tabMemcpy))
		return nil
	}
	cols, err := r.columns(tabMemcpy, "start", "end", "bytes", "copyKind")
	if err != nil {
		return err
	}
	if r.tables[tabCopyOper] == "" {
		return &InputError{Path: r.path, Where: "table " + tabCopyOper,
			Problem: "the export has memory copies but no " + tabCopyOper + " table to tell their directions",
			Hint:    sqliteExportHint}
	}
	opers, err := r.readEnum(tabCopyOper)
	if err != nil {
		return err
	}
	kinds := map[int64]CopyKind{}
	for id, n := range opers {
		kinds[id] = copyKindByName(n)
	}
	memKinds := map[int64]MemKind{}
	haveMemKinds := cols["srcKind"] && cols["dstKind"]
	switch {
	case !haveMemKinds:
		c.Lack(FactMemoryKinds, fmt.Sprintf("table %s has no srcKind/dstKind columns; export with Nsight Systems 2025.3 or newer", table))
	case r.tables[tabMemKind] == "":
		haveMemKinds = false
		c.Lack(FactMemoryKinds, fmt.Sprintf("the export has no %s table to name the memory kinds of copies", tabMemKind))
	default:
		mk, err := r.readEnum(tabMemKind)
		if err != nil {
			return err
		}
		for id, n := range mk {
			memKinds[id] = memKindByName(n)
		}
	}
	if !cols["correlationId"] {
		c.Lack(FactCorrelation, fmt.Sprintf("table %s has no correlationId column", table))
	}
	src, dst := "-1", "-1"
	if haveMemKinds {
		src, dst = `ifnull(srcKind, -1)`, `ifnull(dstKind, -1)`
	}
	q := `SELECT start, "end", bytes, copyKind, ` + src + `, ` + dst + `, ` + col(cols, "correlationId") + `, ` +
		col(cols, "streamId") + `, ` + col(cols, "deviceId") + `, ` + col(cols, "globalPid") +
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
		m.Kind = CopyUnknown
		if k, ok := kinds[kind]; ok {
			m.Kind = k
		}
		m.Src, m.Dst = MemUnknown, MemUnknown
		if k, ok := memKinds[sk]; ok {
			m.Src = k
		}
		if k, ok := memKinds[dk]; ok {
			m.Dst = k
		}
		if gpid != 0 {
			m.PID, _ = splitGlobalID(gpid)
		}
		if cols["deviceId"] {
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
	cols, err := r.columns(tabKernel, "start", "end", "shortName")
	if err != nil {
		return err
	}
	q := `SELECT start, "end", shortName, ` + col(cols, "correlationId") + `, ` + col(cols, "streamId") + `, ` +
		col(cols, "globalPid") + `, ` + col(cols, "deviceId") + ` FROM ` + quoteIdent(table)
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
		if cols["deviceId"] {
			r.devices[dev] = true
		}
		c.Kernels = append(c.Kernels, k)
	}
	if err := rows.Err(); err != nil {
		return r.tableError(table, err)
	}
	return nil
}

// readNVTX reads NVTX push/pop ranges.
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
	cols, err := r.columns(tabNVTX, "start", "end", "eventType")
	if err != nil {
		return err
	}
	if !cols["text"] && !cols["textId"] {
		if _, err := r.columns(tabNVTX, "text"); err != nil {
			return err
		}
	}
	if r.tables[tabEventType] == "" {
		lack(fmt.Sprintf("the export has no %s table, so push/pop ranges cannot be told from other NVTX events", tabEventType))
		return nil
	}
	types, err := r.readEnum(tabEventType)
	if err != nil {
		return err
	}
	pushPop, domainCreate := int64(-1), int64(-1)
	for id, n := range types {
		switch n {
		case "NvtxPushPopRange":
			pushPop = id
		case "NvtxDomainCreate":
			domainCreate = id
		}
	}
	if pushPop < 0 {
		lack(fmt.Sprintf("%s has no NvtxPushPopRange event type", r.tables[tabEventType]))
		return nil
	}
	text, textID := "NULL", "NULL"
	if cols["text"] {
		text = "text"
	}
	if cols["textId"] {
		textID = "textId"
	}

	domains := map[int64]string{}
	if domainCreate >= 0 && cols["domainId"] {
		rows, err := r.db.Query(`SELECT domainId, `+text+`, `+textID+` FROM `+quoteIdent(table)+` WHERE eventType = ?`, domainCreate)
		if err != nil {
			return r.tableError(table, err)
		}
		type dom struct {
			id   sql.NullInt64
			text sql.NullString
			tid  sql.NullInt64
		}
		var ds []dom
		for rows.Next() {
			var d dom
			if err := rows.Scan(&d.id, &d.text, &d.tid); err != nil {
				rows.Close()
				return r.tableError(table, err)
			}
			ds = append(ds, d)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return r.tableError(table, err)
		}
		for _, d := range ds {
			if !d.id.Valid {
				continue
			}
			name := d.text.String
			if !d.text.Valid && d.tid.Valid {
				if name, err = r.str(d.tid.Int64); err != nil {
					return err
				}
			}
			domains[d.id.Int64] = name
		}
	}

	q := `SELECT start, "end", ` + text + `, ` + textID + `, ` + col(cols, "globalTid") + `, ` + col(cols, "domainId") +
		` FROM ` + quoteIdent(table) + ` WHERE eventType = ? ORDER BY start`
	rows, err := r.db.Query(q, pushPop)
	if err != nil {
		return r.tableError(table, err)
	}
	type raw struct {
		rg   Range
		text sql.NullString
		tid  sql.NullInt64
		dom  int64
	}
	var raws []raw
	for rows.Next() {
		var x raw
		var end sql.NullInt64
		var gtid int64
		if err := rows.Scan(&x.rg.Start, &end, &x.text, &x.tid, &gtid, &x.dom); err != nil {
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
		switch {
		case x.text.Valid:
			rg.Name = x.text.String
		case x.tid.Valid:
			if rg.Name, err = r.str(x.tid.Int64); err != nil {
				return err
			}
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
	if !cols["name"] {
		return nil
	}
	// CUDA device id -> GPU id, from TARGET_INFO_CUDA_DEVICE where present,
	// else TARGET_INFO_GPU.cuDevice.
	cudaToGPU := map[int64]int64{}
	if t := r.tables[tabCUDADev]; t != "" {
		dc, err := r.columns(tabCUDADev)
		if err != nil {
			return err
		}
		if dc["gpuId"] && dc["cudaId"] {
			rows, err := r.db.Query(`SELECT cudaId, gpuId FROM ` + quoteIdent(t) + ` WHERE cudaId IS NOT NULL AND gpuId IS NOT NULL`)
			if err != nil {
				return r.tableError(t, err)
			}
			for rows.Next() {
				var cu, g int64
				if err := rows.Scan(&cu, &g); err != nil {
					rows.Close()
					return r.tableError(t, err)
				}
				cudaToGPU[cu] = g
			}
			err = rows.Err()
			rows.Close()
			if err != nil {
				return r.tableError(t, err)
			}
		}
	}
	rows, err := r.db.Query(`SELECT ` + col(cols, "id") + `, ` + col(cols, "cuDevice") + `, ifnull(name, '') FROM ` + quoteIdent(table))
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
		if cols["cuDevice"] {
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
