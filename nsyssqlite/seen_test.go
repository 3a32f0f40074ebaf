package nsyssqlite

import (
	"context"
	"database/sql"
	"slices"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/fixture"
	"github.com/nsyscheck/nsyscheck/records"
)

// auditHandler wants what the audit's stream reads: every call, copy,
// kernel and memset, the synchronisations, event records, counts and meta.
func auditHandler() records.Handler {
	return records.Handler{Call: func(*records.Call) error { return nil }, Op: func(*records.Op) error { return nil },
		Sync: func(*records.Sync) error { return nil }, Event: func(*records.EventRecord) error { return nil },
		Meta: func(*records.Meta) error { return nil }, Counts: func(*records.Counts) error { return nil }}
}

// streamThenCheck runs the stream and then the checks over whole tables
// after it, as StreamThenCheck does, and returns the reader for its passes.
func streamThenCheck(t *testing.T, p string, h records.Handler) (*reader, error) {
	t.Helper()
	ctx := context.Background()
	db := open(t, p)
	planned := make(chan *reader, 1)
	_, serr := read(ctx, db, p, records.Selection{JoinCalls: true}, h, planned, nil)
	r := <-planned
	again := make(chan *reader, 1)
	again <- r
	ierr, terr := check(ctx, db, p, again, true)
	if err := readResult(ctx, p, ierr, terr); err != nil {
		return r, err
	}
	return r, serr
}

// After a stream that read the tables of records whole, the checks over
// whole tables answer from its records: no pass of their own over the
// copies, kernels, memsets or calls (the synchronisations and event
// records, which the stream reads through database/sql, are still passed
// over), and the trace's counts are the rows the stream
// read, as SQLite counts them. Checks beside the stream (Read) make their
// passes.
func TestChecksAfterTheStreamReadNoTableAgain(t *testing.T) {
	r, err := streamThenCheck(t, trainPinned, auditHandler())
	if err != nil {
		t.Fatal(err)
	}
	for _, logical := range []string{"CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMSET"} {
		if slices.Contains(r.passes, r.tables[logical]) {
			t.Errorf("the checks after the stream passed over %s (passes %v)", logical, r.passes)
		}
		s := r.seen[logical]
		if s == nil {
			t.Errorf("%s: not seen whole", logical)
			continue
		}
		var n int64
		if err := open(t, trainPinned).QueryRow(`SELECT count(*) FROM ` + r.tables[logical]).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if s.rows != n || n == 0 {
			t.Errorf("%s: the stream counted %d rows, SQLite %d", logical, s.rows, n)
		}
	}

	// The processes of the calls' threads are SQLite's, for the exposure
	// scan (privacy.Known).
	var pids []int64
	rows, err := open(t, trainPinned).Query(`SELECT DISTINCT ((globalTid >> 24) & 16777215) FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var p int64
		if err := rows.Scan(&p); err != nil {
			t.Fatal(err)
		}
		pids = append(pids, p)
	}
	rows.Close()
	if got := r.callPIDs(); !slices.Equal(got, pids) || len(pids) == 0 {
		t.Errorf("call pids %v, SQLite's %v", got, pids)
	}

	// Beside the stream, the checks read every table themselves.
	db := open(t, trainPinned)
	planned := make(chan *reader, 1)
	rr := &reader{ctx: context.Background(), db: db, path: trainPinned, opts: records.Selection{}, h: auditHandler(), info: &Info{}, strs: map[int64]string{}}
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rr.conn = conn
	defer conn.Close()
	if err := rr.prepare(); err != nil {
		t.Fatal(err)
	}
	if err := rr.plan(); err != nil {
		t.Fatal(err)
	}
	planned <- rr
	if _, terr := check(context.Background(), db, trainPinned, planned, false); terr != nil {
		t.Fatal(terr)
	}
	if !slices.Contains(rr.passes, "CUPTI_ACTIVITY_KIND_MEMCPY") || !slices.Contains(rr.passes, "CUPTI_ACTIVITY_KIND_RUNTIME") {
		t.Errorf("the checks beside the stream passed over %v, not the copies and calls", rr.passes)
	}
}

// A damage the checks over whole tables find is refused after the stream
// with the words they give beside it (Read): where a value the stream saw
// is not listed or past the stop, their own pass runs and says where.
// The unlisted device, which readGPU holds the records to where the
// export lists more than one GPU, is held to the list after the stream
// for one GPU, with the same words.
func TestChecksAfterTheStreamAsBeside(t *testing.T) {
	cases := []struct {
		name  string
		stmts []string
	}{
		{"a copy on a stream never made", []string{`UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET streamId = 777 WHERE rowid = 9`}},
		{"a kernel on a stream never made", []string{`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET streamId = 778 WHERE rowid = 2`}},
		{"a memset on a stream never made", []string{`UPDATE CUPTI_ACTIVITY_KIND_MEMSET SET streamId = 779 WHERE rowid = 1`}},
		{"a copy of another context", []string{`UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET contextId = 55 WHERE rowid = 30`}},
		{"a kernel of another process", []string{`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET globalPid = globalPid + (1 << 24) WHERE rowid = 3`}},
		{"the contexts listed for another process", []string{`UPDATE TARGET_INFO_CUDA_CONTEXT_INFO SET processId = 99`}},
		{"a call past the stop", []string{`UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = end + 9000000000000 WHERE rowid = 40`}},
		{"a copy past the stop", []string{`UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET end = end + 9000000000000 WHERE rowid = 40`}},
		{"a kernel past the stop", []string{`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = end + 9000000000000 WHERE rowid = 4`}},
		{"the copies on device 5, no context list", []string{`UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET deviceId = 5`, `DROP TABLE TARGET_INFO_CUDA_CONTEXT_INFO`}},
		{"one kernel on device 6, no context list", []string{`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = 6 WHERE rowid = 7`, `DROP TABLE TARGET_INFO_CUDA_CONTEXT_INFO`}},
		{"a call whose name resolves to nothing", []string{`UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET nameId = 99999999 WHERE rowid = 12`}},
		{"a kernel whose name resolves to nothing", []string{`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET shortName = 99999998 WHERE rowid = 5`}},
		{"the streams listed as halves", []string{`UPDATE TARGET_INFO_CUDA_STREAM SET streamId = streamId + 0.5`}},
		{"a stream listed for another process", []string{`UPDATE TARGET_INFO_CUDA_STREAM SET processId = 23 WHERE streamId = (SELECT streamId FROM CUPTI_ACTIVITY_KIND_MEMCPY LIMIT 1)`}},
		{"a stream listed in another context", []string{`UPDATE TARGET_INFO_CUDA_STREAM SET contextId = 2 WHERE streamId = (SELECT streamId FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1)`}},
	}
	h := auditHandler()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := fixture.SQLite(t, trainPinned, tc.stmts...)
			_, beside := Read(context.Background(), open(t, p), p, records.Selection{JoinCalls: true}, h)
			_, after := streamThenCheck(t, p, h)
			if beside == nil {
				t.Fatal("Read passed the damaged export")
			}
			if after == nil || after.Error() != beside.Error() {
				t.Errorf("after the stream:\n  %v\nbeside it:\n  %v", after, beside)
			}
		})
	}
}

// The stream's row counts are SQLite's for the runtime table without its
// rows of call stacks, where it holds them: the shipped capture with call
// stacks counts as nsys does, and its checks still pass over the calls,
// whose stacks' rows the stream leaves out, and it names no processes of
// every row for the exposure scan.
func TestSeenCallsWithStacks(t *testing.T) {
	const p = "../testdata/captures/pipeline-backtrace/pipeline-backtrace.sqlite"
	r, err := streamThenCheck(t, p, auditHandler())
	if err != nil {
		t.Fatal(err)
	}
	s := r.seen["CUPTI_ACTIVITY_KIND_RUNTIME"]
	if s == nil || s.allRows {
		t.Fatalf("the calls seen: %+v, want the calls without the stacks' rows", s)
	}
	var n int64
	db := open(t, p)
	if err := db.QueryRow(`SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE ` + r.callsOnly("")).Scan(&n); err != nil {
		t.Fatal(err)
	}
	var all sql.NullInt64
	if err := db.QueryRow(`SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME`).Scan(&all); err != nil {
		t.Fatal(err)
	}
	if s.rows != n || all.Int64 <= n {
		t.Errorf("calls seen %d, SQLite's %d of %d rows", s.rows, n, all.Int64)
	}
	if !slices.Contains(r.passes, "CUPTI_ACTIVITY_KIND_RUNTIME") {
		t.Errorf("passes %v: the stacks' rows were not checked", r.passes)
	}
	if pids := r.callPIDs(); pids != nil {
		t.Errorf("call pids %v from calls without the stacks' rows", pids)
	}
}
