// Package nsyssqlite reads an Nsight Systems SQLite export (nsys export
// --type sqlite) into records: what nsys was asked to trace and on which
// machine (Meta), nsys's own diagnostics, the facts the export cannot give
// (Gap), NVTX push/pop ranges, CUDA API calls, GPU operations (copies,
// kernels, memsets; copies joined to the copy calls read before them where
// asked), synchronisations tied to their calls, event records, whole graph
// launches and the trace's counts. Every table and column name comes from
// internal/nsysdb; every query runs under the reader's context, so a
// cancelled context interrupts it.
//
// The long scans (calls, copies, kernels, memsets) step on a connection of
// their own a batch of rows at a time (internal/sqlitebatch), one goroutine
// stepping SQLite while the caller's hands the records on. SQLite's
// integrity check, and the checks over every row of the tables read,
// run on connections of their own while the records stream: a file that
// fails them is an error, whatever was handed to the Handler before.
package nsyssqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"runtime/trace"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/internal/sqlitebatch"
	"github.com/nsyscheck/nsyscheck/internal/sqlitefile"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// Info is what a read learnt beside its records.
type Info struct {
	// OtherThreads counts, per thread, the calls ProgramThread left out, in
	// the order of records.ThreadCount.Before.
	OtherThreads []records.ThreadCount
	// Tables names the table read for each logical table the export holds
	// (nsysdb.Resolve): CUPTI_ACTIVITY_KIND_RUNTIME_V2 for
	// nsysdb.TableRuntime, say.
	Tables map[string]string
	// Collected is nsys's count of the CUDA events it collected beside the
	// records the export holds of them; a consumer that has found nothing
	// else wrong refuses an export where they differ (capture).
	Collected Collected
	// CallPIDs are the pids (nsysdb.SplitGlobalID) of the threads of every
	// row of the runtime table (Tables names it), in order, where the
	// stream read them all; nil where it did not.
	CallPIDs []int64
}

// Read streams the records of the export at path, open as db, to h: only
// the kinds h wants (a nil field skips its queries) and opts selects, in
// the order the records package gives. With opts.ProgramThread the copies
// and kernels are those of the calls read (kernels of the program's
// process when its thread launched none through cudaLaunchKernel); with
// opts.JoinCalls each copy comes with the copy call that issued it, by
// correlation id within its process (records.CallIndex, held while the
// copies are read: about 40 bytes a copy call), in the copy table's order.
// The file is never written.
//
// Read takes two connections of db: the stream's, and one on which
// SQLite's integrity check and then the checks over whole tables run
// beside it, one after the other; the second is given back as soon as
// they are done, for the exposure scan.
func Read(ctx context.Context, db *sqlitefile.DB, path string, opts records.Selection, h records.Handler) (*Info, error) {
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	planned := make(chan *reader, 1) // the stream's plan, nil where it made none
	integrity := make(chan error, 1)
	tables := make(chan error, 1)
	go func() {
		ierr, terr := check(ictx, db, path, planned, false)
		if ierr != nil || terr != nil {
			cancel()
		}
		integrity <- ierr
		tables <- terr
	}()
	info, err := read(ictx, db, path, opts, h, planned, tables)
	if rerr := readResult(ctx, path, <-integrity, nil); rerr != nil {
		return nil, rerr
	}
	if err != nil {
		return nil, err
	}
	return info, nil
}

// Checked waits for the checks of a whole export that StreamThenCheck left
// running and returns what Read would have returned: nil where the export
// passed them (the records streamed count), else their error. It may be
// called more than once.
type Checked func() error

// StreamThenCheck is Read, but it starts the checks of the whole export
// (SQLite's integrity check, then the checks over whole tables) once the
// records have streamed, and returns without waiting for them: they run
// beside what the caller does next, on a connection of their own, and
// nothing the stream handed on counts until checked returns nil. Where
// the stream itself fails, it waits for them, and their error comes
// first, as with Read. On a machine of two cores the stream's two
// goroutines (SQLite's steps, the handler) then have both to themselves.
func StreamThenCheck(ctx context.Context, db *sqlitefile.DB, path string, opts records.Selection, h records.Handler) (*Info, Checked, error) {
	ictx, cancel := context.WithCancel(ctx)
	streamed := make(chan struct{})
	planned := make(chan *reader, 1)
	integrity := make(chan error, 1)
	tables := make(chan error, 1)
	go func() {
		<-streamed
		ierr, terr := check(ictx, db, path, planned, true)
		integrity <- ierr
		tables <- terr
	}()
	info, err := read(ictx, db, path, opts, h, planned, nil)
	close(streamed)
	var (
		once   sync.Once
		result error
	)
	checked := func() error {
		once.Do(func() {
			ierr, terr := <-integrity, <-tables
			cancel()
			result = readResult(ctx, path, ierr, terr)
		})
		return result
	}
	if err != nil {
		if cerr := checked(); cerr != nil {
			return nil, nil, cerr
		}
		return nil, nil, err
	}
	return info, checked, nil
}

// readResult is the error of a read whose integrity check gave ierr and
// whose checks over whole tables gave terr: the interruption where ctx was
// cancelled, else the first of them.
func readResult(ctx context.Context, path string, ierr, terr error) error {
	switch {
	case ctx.Err() != nil:
		return &inputerr.Error{Path: path, Problem: "interrupted while reading the export", Err: context.Cause(ctx)}
	case ierr != nil:
		return ierr
	}
	return terr
}

// check runs on one connection of db, beside the stream or after it:
// SQLite's integrity check, then, once the stream has planned its read
// (planned), the checks over every row of the tables it reads
// (checkTables); after says the stream has ended.
func check(ctx context.Context, db *sqlitefile.DB, path string, planned <-chan *reader, after bool) (integrity, tables error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return &inputerr.Error{Path: path, Problem: "cannot open the SQLite export", Err: err, Hint: nsysdb.ExportHint}, nil
	}
	defer conn.Close()
	checking := trace.StartRegion(ctx, "integrity check")
	err = db.Integrity(ctx, conn)
	checking.End()
	if err != nil {
		return err, nil
	}
	if r := <-planned; r != nil {
		defer trace.StartRegion(ctx, "checks over whole tables").End()
		return nil, r.checkTables(ctx, conn, after)
	}
	return nil, nil
}

// read is Read's stream, on one connection of db. It hands its plan to
// the checks (planned: the reader once planned, else nil) and, where
// tables is not nil, waits for their answer: a damage they find is the
// read's error, whatever the stream met, as if they had run first.
func read(ctx context.Context, db *sqlitefile.DB, path string, opts records.Selection, h records.Handler,
	planned chan<- *reader, tables <-chan error) (*Info, error) {
	var plan *reader
	sent := false
	send := func() {
		if !sent {
			planned <- plan
			sent = true
		}
	}
	defer send()
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, &inputerr.Error{Path: path, Problem: "cannot open the SQLite export", Err: err, Hint: nsysdb.ExportHint}
	}
	defer conn.Close()
	r := &reader{ctx: ctx, db: db, conn: conn, path: path, opts: opts, h: h, info: &Info{},
		strs: map[int64]string{}, checksAfter: tables == nil}
	defer r.close()
	if err := r.prepare(); err != nil {
		return nil, err
	}
	if err := r.plan(); err != nil {
		return nil, err
	}
	plan = r
	send()
	// The work a synchronisation waited for comes before it: the copies
	// and kernels, the graph launches and the event recordings, so that
	// each synchronisation record is checked against them as it passes.
	steps := []struct {
		name string // the step's region in an execution trace
		emit func() error
	}{{"meta", r.emitMeta}, {"diagnostics", r.emitDiags}, {"gaps", r.emitGaps}, {"ranges", r.emitRanges},
		{"calls", r.emitCalls}, {"ops", r.emitOps}, {"graphs", r.emitGraphs}, {"streams", r.emitStreams}, {"events", r.emitEvents},
		{"syncs", r.emitSyncs}, {"counts", r.emitCounts}, {"collected", r.countCollected}}
	for _, step := range steps {
		trace.WithRegion(ctx, step.name, func() { err = step.emit() })
		if err != nil {
			break
		}
	}
	r.streamed = err == nil
	r.letGo()
	if tables != nil {
		if cerr := <-tables; cerr != nil {
			return nil, cerr
		}
	}
	if err != nil {
		return nil, err
	}
	r.info.Tables = r.tables
	r.info.CallPIDs = r.callPIDs()
	return r.info, nil
}

// reader holds the state of one Read.
type reader struct {
	ctx    context.Context
	db     *sqlitefile.DB
	conn   *sql.Conn
	path   string
	opts   records.Selection
	h      records.Handler
	info   *Info
	schema string            // EXPORT_SCHEMA_VERSION, "" if unknown
	tables map[string]string // logical name -> table name in the file

	strs    map[int64]string // StringIds cache
	rows    map[string]int64 // row counts by logical table (rowCount)
	strStmt *sql.Stmt
	// batch is the connection the long scans run on (ints), nil until
	// the first; batchDone gives it back to db.
	batch     *sqlitebatch.Conn
	batchDone func()

	meta records.Meta
	// hosts says the export holds processes of one pid on more than one
	// host (PROCESSES, readHosts): a process is then named by its global
	// id, host and pid (nsysdb.ProcessOf), so that two of one pid are two.
	hosts bool
	stop  int64 // when the trace stopped (ANALYSIS_DETAILS.stopTime), 0 unknown
	// tracingRead says meta.Tracing was read (reader.tracing).
	tracingRead bool
	gaps        []records.Gap
	// rcols, mcols, kcols are the columns of the runtime, copy and kernel
	// tables; copyKinds, memKinds and migrations name the copies' enum ids
	// (memKinds nil where the export cannot tell memory kinds).
	rcols, mcols, kcols map[string]bool
	copyKinds           map[int64]vocab.CopyKind
	uvmKinds            map[int64]bool // copy kinds that are unified-memory migrations
	memKinds            map[int64]vocab.MemKind
	migrations          map[int64]string
	lastEnums           copyEnums // the last copy's enum ids and their names (decode)
	nvtx                *nvtxPlan
	threads             map[int64]string // thread names by global thread id, read once
	// btClass is the event class of the runtime table's backtrace rows, -1
	// for none (planBacktraces); stacks are the call stacks read for the
	// pageable copies' calls (readStacks), by process and correlation id.
	btClass int64
	stacks  map[stackKey]*records.Stack

	// With opts.ProgramThread: whether only the program's thread was read
	// (the runtime table has thread ids), the correlation ids of its calls,
	// whether it launched kernels through cudaLaunchKernel, and its process.
	threadOnly bool
	wantCorr   corrList
	launches   bool
	pid        int64

	// With opts.JoinCalls: the copy calls read (their API names' ids in
	// copyAPI), which the copies read after them are joined to.
	joining bool
	copyAPI map[int64]bool
	index   records.CallIndex
	// With a Sync handler and every call read: the synchronising calls
	// (their APIs' name ids in syncAPI), which the synchronisation records
	// are tied to without a join in SQL (syncsRead says they were read).
	syncAPI   map[int64]bool
	syncCalls records.CallIndex
	// callsAhead is the program's thread's calls counted by programThread,
	// told to the handler before they are read (records.Handler.CallsAhead).
	callsAhead int
	syncsRead  bool

	// seen is what the stream saw of each table it read whole, by logical
	// name (seeTable), and streamed says it succeeded: the checks over
	// whole tables that run after it answer from them.
	seen     map[string]*seenTable
	streamed bool
	// checksAfter says the checks over whole tables run after the stream
	// (StreamThenCheck), and gpus is the GPU list readGPU left them to
	// hold the records' devices to (checkDevices), nil for none.
	checksAfter bool
	gpus        *gpuList
	// passes names, for each pass the checks over whole tables made over
	// a table of records, the table: what the stream's records could not
	// answer.
	passes []string
}

// letGo drops what only the stream needs once it has streamed: the
// handler (and what it holds: the checks across records), the calls the
// copies and synchronisations were joined to, the call stacks, the
// program's correlation ids. The checks over whole tables hold the reader
// while the caller goes on (the audit's replay) and need only its plan; on
// the 600,000-copy capture the rest is about 50 MB.
func (r *reader) letGo() {
	r.h = records.Handler{}
	r.index, r.syncCalls = records.CallIndex{}, records.CallIndex{}
	r.stacks, r.wantCorr = nil, corrList{}
}

func (r *reader) close() {
	if r.strStmt != nil {
		r.strStmt.Close()
	}
	if r.batchDone != nil {
		r.batchDone()
	}
}

// lack records a fact the export cannot give, for emitGaps.
func (r *reader) lack(f records.Fact, reason string) {
	r.gaps = append(r.gaps, records.Gap{Fact: f, Reason: reason})
}

// tableError reports that a table could not be read, e.g. because the file
// is damaged.
func (r *reader) tableError(table string, err error) error {
	return r.tableErrorOn(r.queryRow, table, err)
}

// tableErrorOn is tableError for a read on another connection than the
// stream's (the checks beside it): queryRow runs its queries there, so
// that the count of NULLs it gives is read where the check ran, while the
// stream goes on or after it has closed its own.
func (r *reader) tableErrorOn(queryRow func(string, ...any) *sql.Row, table string, err error) error {
	var ie *inputerr.Error
	if errors.As(err, &ie) {
		return err
	}
	if r.ctx.Err() != nil {
		return &inputerr.Error{Path: r.path, Where: "table " + table, Problem: "interrupted while reading the table", Err: context.Cause(r.ctx)}
	}
	if m := nullScan.FindStringSubmatch(err.Error()); m != nil {
		return r.nullColumn(queryRow, table, m[1])
	}
	return &inputerr.Error{Path: r.path, Where: "table " + table, Problem: "cannot read the table", Err: err,
		Hint: "the file may be damaged or truncated; " + nsysdb.ExportHint}
}

// rowCount says n rows: "1 row", "207 rows".
func rowCount(n int64) string {
	if n == 1 {
		return "1 row"
	}
	return fmt.Sprintf("%d rows", n)
}

// nullScan matches database/sql's error for a NULL read into a number,
// its column's name in the first group.
var nullScan = regexp.MustCompile(`Scan error on column index \d+, name "([^"]+)": converting NULL`)

// nullColumn says that a column nsys always fills is NULL in table, in how
// many rows and the first of them (where the table itself holds the
// column: a query's own name for it is named alone).
func (r *reader) nullColumn(queryRow func(string, ...any) *sql.Row, table, col string) error {
	problem := fmt.Sprintf("column %s is NULL, where nsys always writes a value and the answer rests on it", col)
	var n, first sql.NullInt64
	if queryRow(`SELECT count(*), min(rowid) FROM `+q(table)+` WHERE `+q(col)+` IS NULL`).Scan(&n, &first) == nil && n.Int64 > 0 {
		problem = fmt.Sprintf("column %s is NULL in %s (the first: rowid %d), where nsys always writes a value and the answer rests on it", col, rowCount(n.Int64), first.Int64)
	}
	return &inputerr.Error{Path: r.path, Where: "table " + table, Problem: problem,
		Hint: "the export is damaged or was edited; " + nsysdb.ExportHint}
}

// handled names the export, and the table a record came from, in an error
// its consumer returned about the record (inputerr.Attribute).
func (r *reader) handled(table string, err error) error {
	if err == nil {
		return nil
	}
	where := ""
	if table != "" {
		where = "table " + table
	}
	return inputerr.Attribute(err, r.path, where)
}

// drained is the error of a table's stream once its records are handed on
// (err, nil where it ended well): a handler that handles them later
// (records.Handler.Drain) has handled them all when it returns, and an
// error it met on one of them comes first, named as the table's
// (handled), as it would have where the handler had met it as the record
// was given.
func (r *reader) drained(table string, err error) error {
	if r.h.Drain == nil {
		return err
	}
	if derr := r.h.Drain(); derr != nil {
		return r.handled(table, derr)
	}
	return err
}

// query runs a query on the reader's connection.
func (r *reader) query(q string, args ...any) (*sql.Rows, error) {
	return r.conn.QueryContext(r.ctx, q, args...)
}

// queryRow runs a one-row query on the reader's connection.
func (r *reader) queryRow(q string, args ...any) *sql.Row {
	return r.conn.QueryRowContext(r.ctx, q, args...)
}

// prepare lists the tables, reads the metadata and checks that the export
// has the API trace and the string table every name is read from.
func (r *reader) prepare() error {
	if err := r.readTables(); err != nil {
		return err
	}
	r.readMeta()
	// Read once, here, before the plan reaches the checks running beside
	// the stream: checkStop reads r.stop from their goroutine.
	r.readDuration()
	if err := r.readHosts(); err != nil {
		return err
	}
	if err := r.readProcesses(); err != nil {
		return err
	}
	if r.tables[nsysdb.TableRuntime] == "" {
		return &inputerr.Error{Path: r.path, Where: "table " + nsysdb.TableRuntime,
			Problem: inputerr.ProblemNoAPITrace,
			Hint:    "profile with nsys profile -t cuda,nvtx and export again"}
	}
	strs := nsysdb.TableStrings
	if r.tables[strs] == "" {
		return &inputerr.Error{Path: r.path, Where: "table " + strs,
			Problem: "no string table (" + strs + ") in this export, so API, kernel and range names cannot be read",
			Hint:    nsysdb.ExportHint}
	}
	if _, err := r.columns(strs, nsysdb.ColID, nsysdb.ColValue); err != nil {
		return err
	}
	st, err := r.conn.PrepareContext(r.ctx, `SELECT `+q(nsysdb.ColValue)+` FROM `+q(r.tables[strs])+` WHERE `+q(nsysdb.ColID)+` = ?`)
	if err != nil {
		return r.tableError(r.tables[strs], err)
	}
	r.strStmt = st
	return nil
}

// readHosts says whether PROCESSES, or TARGET_INFO_CUDA_CONTEXT_INFO,
// lists two processes of one pid on two hosts (global ids that differ
// above the pid; contexts of one processId on two hwId, vmId): only then
// is the pid not enough to tell a process. Neither table is needed for
// any answer: where one cannot be read, the other decides, else the pid
// is taken as enough, and the checks across records still refuse a
// process's records twice (and checkContexts work on a host its list
// does not name).
func (r *reader) readHosts() error {
	if t := r.tables[nsysdb.TableProcesses]; t != "" {
		g := q(nsysdb.ColGlobalPid)
		var n int64
		err := r.queryRow(`SELECT count(*) FROM (SELECT 1 FROM ` + q(t) + ` WHERE ` + g + ` IS NOT NULL GROUP BY ` + nsysdb.PIDExpr(g) +
			` HAVING count(DISTINCT ` + g + ` >> 48) > 1)`).Scan(&n)
		if r.ctx.Err() != nil {
			return r.tableError(t, err)
		}
		r.hosts = err == nil && n > 0
	}
	if t := r.tables[nsysdb.TableCUDAContext]; t != "" && !r.hosts {
		var n int64
		err := r.queryRow(`SELECT count(*) FROM (SELECT 1 FROM ` + q(t) + ` GROUP BY ` + q(nsysdb.ColProcessID) +
			` HAVING count(DISTINCT ` + q(nsysdb.ColHwID) + ` * 256 + ` + q(nsysdb.ColVMID) + `) > 1)`).Scan(&n)
		if r.ctx.Err() != nil {
			return r.tableError(t, err)
		}
		r.hosts = err == nil && n > 0
	}
	return nil
}

// readProcesses lists the names of the processes PROCESSES holds
// (Meta.Processes), one per process. Like readHosts it backs no answer alone:
// where the table or its name column cannot be read, none are listed.
func (r *reader) readProcesses() error {
	t := r.tables[nsysdb.TableProcesses]
	if t == "" {
		return nil
	}
	rows, err := r.query(`SELECT ` + q(nsysdb.ColName) + ` FROM ` + q(t) + ` WHERE ` + q(nsysdb.ColName) +
		` IS NOT NULL LIMIT ` + strconv.Itoa(records.MaxProcessNames))
	if err != nil {
		if r.ctx.Err() != nil {
			return r.tableError(t, err)
		}
		return nil
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if rows.Scan(&n) == nil {
			names = append(names, n)
		}
	}
	if r.ctx.Err() != nil {
		return r.tableError(t, r.ctx.Err())
	}
	r.meta.Processes = names
	return nil
}

// split decodes a global thread or process id into the process and thread
// the records carry: the pid (nsysdb.SplitGlobalID), or where the export
// holds processes of more than one host the process's global id
// (nsysdb.ProcessOf).
func (r *reader) split(g int64) (pid, tid int64) {
	pid, tid = nsysdb.SplitGlobalID(g)
	if r.hosts {
		pid = nsysdb.ProcessOf(g)
	}
	return pid, tid
}

// processExpr is the SQL expression of the process split gives for the
// global id in column expr.
func (r *reader) processExpr(expr string) string {
	if r.hosts {
		return nsysdb.ProcessExpr(expr)
	}
	return nsysdb.PIDExpr(expr)
}

// readTables lists the file's tables and maps each logical table to the
// table that holds its data (nsysdb.Resolve): the highest-versioned of
// NAME, NAME_V2, NAME_V3, ... that holds a row. A view or virtual table of
// one of those names, or two versions holding rows, is refused.
func (r *reader) readTables() error {
	fail := func(err error) error {
		return &inputerr.Error{Path: r.path, Problem: "cannot read the database schema", Err: err,
			Hint: "the file may be damaged or truncated; " + nsysdb.ExportHint}
	}
	rows, err := r.query(`SELECT name, type, ifnull(sql, '') FROM ` + nsysdb.TableSchemaListing + ` WHERE type IN ('table', 'view')`)
	if err != nil {
		return fail(err)
	}
	defer rows.Close()
	var objs []nsysdb.SchemaObject
	for rows.Next() {
		var o nsysdb.SchemaObject
		if err := rows.Scan(&o.Name, &o.Type, &o.SQL); err != nil {
			return fail(err)
		}
		objs = append(objs, o)
	}
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	if len(objs) == 0 {
		return &inputerr.Error{Path: r.path, Problem: "the SQLite database holds no tables, so it is not an Nsight Systems export", Hint: nsysdb.ExportHint}
	}
	hasRows := func(table string) (bool, error) {
		var one int
		err := r.queryRow(`SELECT 1 FROM ` + q(table) + ` LIMIT 1`).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		return err == nil, err
	}
	r.tables, err = nsysdb.Resolve(objs, hasRows, nsysdb.TableRuntime, nsysdb.TableMemcpy, nsysdb.TableKernel, nsysdb.TableMemset,
		nsysdb.TableNVTX, nsysdb.TableStrings, nsysdb.TableCopyOper, nsysdb.TableMemKind, nsysdb.TableEventType,
		nsysdb.TableMetaExport, nsysdb.TableMetaCapture, nsysdb.TableGPU, nsysdb.TableCUDADevice, nsysdb.TableSystemEnv,
		nsysdb.TableThreadNames, nsysdb.TableAnalysis, nsysdb.TableSync, nsysdb.TableSyncType, nsysdb.TableCUDAEvent,
		nsysdb.TableGraphTrace, nsysdb.TableDiagnostic, nsysdb.TableDiagSeverity, nsysdb.TableDiagSource, nsysdb.TableMigration,
		nsysdb.TableEventClass, nsysdb.TableCallchains, nsysdb.TableProcesses, nsysdb.TableCUDAStream, nsysdb.TableCUDAContext, nsysdb.TableSessionStart)
	var te *nsysdb.TableError
	if errors.As(err, &te) {
		if r.ctx.Err() != nil {
			return r.tableError(te.Table, r.ctx.Err())
		}
		return &inputerr.Error{Path: r.path, Where: "table " + te.Table, Problem: te.Problem, Hint: nsysdb.ExportHint}
	}
	return err
}

// columns returns the columns of the logical table, failing with an
// *inputerr.Error naming the first of the required columns it lacks.
func (r *reader) columns(logical string, required ...string) (map[string]bool, error) {
	table := r.tables[logical]
	rows, err := r.query(`PRAGMA table_info(` + q(table) + `)`)
	if err != nil {
		return nil, r.tableError(table, err)
	}
	defer rows.Close()
	cols := map[string]bool{}
	types := map[string]string{}
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
		types[name] = typ.String
	}
	if err := rows.Err(); err != nil {
		return nil, r.tableError(table, err)
	}
	schema := r.schema
	if schema == "" {
		schema = "unknown"
	}
	hint := "nsyscheck reads exports of Nsight Systems 2025.3 (schema " + nsysdb.KnownSchema + "); " + nsysdb.ExportHint
	for _, c := range required {
		if !cols[c] {
			return nil, &inputerr.Error{Path: r.path, Where: "table " + table,
				Problem: fmt.Sprintf("column %s is missing (export schema version %s)", c, schema), Hint: hint}
		}
		if a := nsysdb.Affinity(types[c]); !nsysdb.IsTextColumn(c) && (a == nsysdb.AffinityText || a == nsysdb.AffinityReal) {
			return nil, &inputerr.Error{Path: r.path, Where: "table " + table,
				Problem: fmt.Sprintf("column %s is declared %s, where nsys writes an integer column: not a table nsys wrote", c, strconv.Quote(types[c])),
				Hint:    hint}
		}
	}
	return cols, nil
}

// q quotes an SQL identifier (a table or column name).
func q(name string) string { return nsysdb.QuoteIdent(name) }

// col returns the column expression for an optional integer column: the
// column with NULL read as 0, or 0 when the table has no such column.
func col(cols map[string]bool, name string) string {
	if cols[name] {
		return `ifnull(` + q(name) + `, 0)`
	}
	return "0"
}

// must is col for a column nsys always fills and an answer rests on (a
// kernel's or memset's stream, which orders it with the rest): a NULL in
// it is refused (tableError names it), not read as 0.
func must(cols map[string]bool, name string) string {
	if cols[name] {
		return q(name)
	}
	return "0"
}

// str returns the string with the given StringIds id, which column col of
// the logical table from refers to. An id the string table does not hold
// is a reference that does not resolve: the export is damaged.
func (r *reader) str(id int64, from, col string) (string, error) {
	if s, ok := r.strs[id]; ok {
		return s, nil
	}
	var s string
	err := r.strStmt.QueryRowContext(r.ctx, id).Scan(&s)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", r.unresolved(id, from, col)
	case err != nil:
		return "", r.tableError(r.tables[nsysdb.TableStrings], err)
	}
	r.strs[id] = s
	return s, nil
}

// unresolved is the error of a string id, which column col of the logical
// table from refers to, that the string table does not hold.
func (r *reader) unresolved(id int64, from, col string) error {
	return &inputerr.Error{Path: r.path, Where: "table " + r.tables[from],
		Problem: fmt.Sprintf("%s %d names no string of %s: a reference that does not resolve", col, id, r.tables[nsysdb.TableStrings]),
		Hint:    "the export is damaged or was edited; " + nsysdb.ExportHint}
}

// readEnum reads an ENUM_* table as id -> name.
func (r *reader) readEnum(logical string) (map[int64]string, error) {
	m, conflict, err := r.enumTable(logical)
	if conflict != nil {
		return nil, conflict
	}
	return m, err
}

// enumTable reads an ENUM_* table as id -> name: err where it cannot be
// read, conflict where it reads but contradicts itself (an id defined as
// two names, or a name defined at two ids), which nsys never writes, so
// that what the ids in the records name is unclear.
func (r *reader) enumTable(logical string) (out map[int64]string, conflict, err error) {
	if _, err := r.columns(logical, nsysdb.ColID, nsysdb.ColName); err != nil {
		return nil, nil, err
	}
	table := r.tables[logical]
	rows, err := r.query(`SELECT ` + q(nsysdb.ColID) + `, ifnull(` + q(nsysdb.ColName) + `, '') FROM ` + q(table) + ` ORDER BY rowid`)
	if err != nil {
		return nil, nil, r.tableError(table, err)
	}
	defer rows.Close()
	out = map[int64]string{}
	ids := map[string]int64{} // the id of each name, the first it was given
	twice := func(problem string) error {
		return &inputerr.Error{Path: r.path, Where: "table " + table,
			Problem: problem, Hint: "the export is damaged or was edited; " + nsysdb.ExportHint}
	}
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, nil, r.tableError(table, err)
		}
		if old, dup := out[id]; dup && old != name {
			return nil, twice(fmt.Sprintf("id %d is defined twice, as %s and as %s, so what it names is unclear (nsys defines each id once)", id, old, name)), nil
		}
		if first, dup := ids[name]; dup && first != id && name != "" {
			return nil, twice(fmt.Sprintf("%s is defined at two ids, %d and %d, so which of them the records mean by it is unclear (nsys defines each name once)", name, first, id)), nil
		}
		out[id] = name
		if _, dup := ids[name]; !dup {
			ids[name] = id
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, r.tableError(table, err)
	}
	return out, nil, nil
}

// optionalEnum reads an ENUM_* table where the export has one; empty
// otherwise, or where it cannot be read (the names it gives are
// optional). One that contradicts itself is refused all the same
// (enumTable): a name read at the wrong id is not a name left out.
func (r *reader) optionalEnum(logical string) (map[int64]string, error) {
	if r.tables[logical] == "" {
		return map[int64]string{}, nil
	}
	m, conflict, err := r.enumTable(logical)
	switch {
	case conflict != nil:
		return nil, conflict
	case err != nil:
		if r.ctx.Err() != nil {
			return nil, err
		}
		return map[int64]string{}, nil
	}
	return m, nil
}

// nameValues looks up rows by name in a (name, value) table; a name that
// ends in ":" matches every row whose name ends so too. Errors leave the
// result empty: metadata is optional.
func (r *reader) nameValues(logical string, names ...string) map[string]string {
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
	rows, err := r.query(`SELECT `+q(nsysdb.ColName)+`, ifnull(`+q(nsysdb.ColValue)+`, '') FROM `+q(r.tables[logical])+` WHERE `+q(nsysdb.ColName)+` IN (`+ph+`)`, args...)
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

// sortedIDs returns the keys of a set in order.
func sortedIDs(set map[int64]bool) []int64 {
	ids := make([]int64, 0, len(set))
	for id := range set {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// likeEscape escapes LIKE wildcards with a backslash.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// stringIDs returns the StringIds ids whose value meets one of conds (SQL
// conditions on the value column, with args) and keep, which checks what
// LIKE cannot.
func (r *reader) stringIDs(conds []string, args []any, keep func(id int64, v string) bool) ([]int64, error) {
	table := r.tables[nsysdb.TableStrings]
	rows, err := r.query(`SELECT `+nsysdb.Cols(nsysdb.ColID, nsysdb.ColValue)+` FROM `+q(table)+` WHERE `+strings.Join(conds, " OR "), args...)
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

// apiNameIDs returns the StringIds ids whose value is one of names, with or
// without a _vNNNN suffix.
func (r *reader) apiNameIDs(names []string) ([]int64, error) {
	want := map[string]bool{}
	var conds []string
	var args []any
	for _, n := range names {
		if n == "" || want[n] {
			continue
		}
		want[n] = true
		v := q(nsysdb.ColValue)
		conds = append(conds, v+` = ? OR `+v+` LIKE ? || '\_v%' ESCAPE '\'`)
		args = append(args, n, likeEscape(n))
	}
	if len(conds) == 0 {
		return nil, nil
	}
	// LIKE ignores ASCII case and matches any suffix after _v: check exactly.
	return r.stringIDs(conds, args, func(id int64, v string) bool {
		if !want[nsysdb.StripAPIVersion(v)] {
			return false
		}
		r.strs[id] = v
		return true
	})
}

// prefixNameIDs returns the StringIds ids of the API names that start with
// one of prefixes (LIKE ignores ASCII case: keep checks exactly).
func (r *reader) prefixNameIDs(prefixes []string, keep func(string) bool) ([]int64, error) {
	var conds []string
	var args []any
	for _, p := range prefixes {
		conds = append(conds, q(nsysdb.ColValue)+` LIKE ? || '%' ESCAPE '\'`)
		args = append(args, likeEscape(p))
	}
	return r.stringIDs(conds, args, func(id int64, v string) bool {
		if !keep(v) {
			return false
		}
		r.strs[id] = v
		return true
	})
}
