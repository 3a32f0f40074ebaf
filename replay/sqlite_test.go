package replay_test

import (
	"context"
	"database/sql"

	"path/filepath"
	"regexp"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	"github.com/nsyscheck/nsyscheck/internal/fixture"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/timeline"
)

// This file reads an nsys SQLite export into records with plain SQL of its
// own, independent of the capture readers, so that the timeline and the
// replay can be tested on real captures and their region times checked
// against SQL.

func openExport(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+filepath.ToSlash(path)+"?mode=ro&immutable=1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// table returns the export's table whose name is base or base_V<n>, ""
// when there is none.
func table(t testing.TB, db *sql.DB, base string) string {
	t.Helper()
	var name string
	err := db.QueryRow(`SELECT name FROM sqlite_master WHERE type = 'table' AND (name = ? OR name LIKE ? || '_V%')
		ORDER BY length(name) DESC, name DESC LIMIT 1`, base, base).Scan(&name)
	if err == sql.ErrNoRows {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return name
}

var versionSuffix = regexp.MustCompile(`_v\d+$`)

// syncKindOf tells a synchronisation record's kind by its call's name
// first (the exports' syncType column has been seen to disagree with its
// own enum), else by the enum's name.
func syncKindOf(api, enum string) records.SyncKind {
	switch timeline.RoleOf(api) {
	case timeline.RoleStreamSync:
		return records.SyncStream
	case timeline.RoleDeviceSync:
		return records.SyncContext
	case timeline.RoleEventSync, timeline.RoleEventQuery:
		return records.SyncEvent
	case timeline.RoleStreamWait:
		return records.SyncStreamWait
	}
	switch {
	case strings.HasSuffix(enum, "EVENT_SYNCHRONIZE"):
		return records.SyncEvent
	case strings.HasSuffix(enum, "STREAM_WAIT_EVENT"):
		return records.SyncStreamWait
	case strings.HasSuffix(enum, "STREAM_SYNCHRONIZE"):
		return records.SyncStream
	case strings.HasSuffix(enum, "CONTEXT_SYNCHRONIZE"):
		return records.SyncContext
	}
	return records.SyncUnknown
}

// readExport hands an export's ranges, calls (with their threads' names),
// ops (a copy with its graph node), syncs, event records and whole graph
// launches to h, in the order records.Handler documents.
func readExport(t testing.TB, path string, h records.Handler) {
	t.Helper()
	db := openExport(t, path)
	q := func(query string, scan func(*sql.Rows) error) {
		t.Helper()
		rows, err := db.Query(query)
		if err != nil {
			t.Fatalf("%s: %v\n%s", path, err, query)
		}
		defer rows.Close()
		for rows.Next() {
			if err := scan(rows); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if nv := table(t, db, "NVTX_EVENTS"); nv != "" {
		q(`SELECT coalesce(n.text, s.value, ''), n.start, coalesce(n."end", 0), n."end" IS NULL,
			(n.globalTid >> 24) & 16777215, n.globalTid & 16777215
			FROM `+nv+` n LEFT JOIN StringIds s ON s.id = n.textId
			WHERE n.eventType = (SELECT id FROM ENUM_NSYS_EVENT_TYPE WHERE name = 'NvtxPushPopRange')`,
			func(r *sql.Rows) error {
				var x records.Range
				if err := r.Scan(&x.Name, &x.Start, &x.End, &x.Open, &x.PID, &x.TID); err != nil {
					return err
				}
				return h.Range(&x)
			})
	}
	rt := table(t, db, "CUPTI_ACTIVITY_KIND_RUNTIME")
	threadName, threadJoin := `''`, ``
	if table(t, db, "ThreadNames") != "" {
		threadName = `coalesce(ts.value, '')`
		threadJoin = ` LEFT JOIN (SELECT globalTid, min(nameId) nameId FROM ThreadNames GROUP BY globalTid) tn ON tn.globalTid = r.globalTid
			LEFT JOIN StringIds ts ON ts.id = tn.nameId`
	}
	q(`SELECT s.value, r.start, r."end", r.returnValue, r.correlationId, (r.globalTid >> 24) & 16777215, r.globalTid & 16777215, `+threadName+`
		FROM `+rt+` r JOIN StringIds s ON s.id = r.nameId`+threadJoin+` WHERE `+notBacktrace,
		func(r *sql.Rows) error {
			var c records.Call
			if err := r.Scan(&c.Name, &c.Start, &c.End, &c.Result, &c.Corr, &c.PID, &c.TID, &c.Thread); err != nil {
				return err
			}
			c.Name = versionSuffix.ReplaceAllString(c.Name, "")
			return h.Call(&c)
		})
	if mc := table(t, db, "CUPTI_ACTIVITY_KIND_MEMCPY"); mc != "" {
		q(`SELECT m.start, m."end", m.correlationId, (m.globalPid >> 24) & 16777215, m.deviceId, m.streamId, m.bytes,
			o.name, coalesce(sk.name, ''), coalesce(dk.name, ''), coalesce(m.graphNodeId, 0)
			FROM `+mc+` m JOIN ENUM_CUDA_MEMCPY_OPER o ON o.id = m.copyKind
			LEFT JOIN ENUM_CUDA_MEM_KIND sk ON sk.id = m.srcKind LEFT JOIN ENUM_CUDA_MEM_KIND dk ON dk.id = m.dstKind`,
			func(r *sql.Rows) error {
				x := records.Op{Kind: records.OpCopy}
				var kind, src, dst string
				if err := r.Scan(&x.Start, &x.End, &x.Corr, &x.PID, &x.Device, &x.Stream, &x.Bytes, &kind, &src, &dst, &x.GraphNode); err != nil {
					return err
				}
				x.Copy, x.Src, x.Dst = nsysdb.CopyKindOf(kind), nsysdb.MemKindOf(src), nsysdb.MemKindOf(dst)
				return h.Op(&x)
			})
	}
	if kt := table(t, db, "CUPTI_ACTIVITY_KIND_KERNEL"); kt != "" {
		q(`SELECT k.start, k."end", k.correlationId, (k.globalPid >> 24) & 16777215, k.deviceId, k.streamId, s.value
			FROM `+kt+` k JOIN StringIds s ON s.id = k.shortName`,
			func(r *sql.Rows) error {
				x := records.Op{Kind: records.OpKernel}
				if err := r.Scan(&x.Start, &x.End, &x.Corr, &x.PID, &x.Device, &x.Stream, &x.Name); err != nil {
					return err
				}
				return h.Op(&x)
			})
	}
	if ms := table(t, db, "CUPTI_ACTIVITY_KIND_MEMSET"); ms != "" {
		q(`SELECT m.start, m."end", m.correlationId, (m.globalPid >> 24) & 16777215, m.deviceId, m.streamId, m.bytes
			FROM `+ms+` m`,
			func(r *sql.Rows) error {
				x := records.Op{Kind: records.OpMemset}
				if err := r.Scan(&x.Start, &x.End, &x.Corr, &x.PID, &x.Device, &x.Stream, &x.Bytes); err != nil {
					return err
				}
				return h.Op(&x)
			})
	}
	if st := table(t, db, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"); st != "" {
		// The synchronising calls' names, by the words syncKindOf reads
		// (joined rather than looked up per row: a correlated look-up
		// scans every call once per record).
		// One row a call: a call recorded twice under one id (the runtime
		// call and its versioned entry, in a capture with backtraces) names
		// one synchronisation, not two.
		q(`WITH calls AS (SELECT r.correlationId c, (r.globalTid >> 24) & 16777215 pid, min(s.value) api
				FROM `+rt+` r JOIN StringIds s ON s.id = r.nameId
				WHERE s.value LIKE '%Synchronize%' OR s.value LIKE '%WaitEvent%' OR s.value LIKE '%EventQuery%'
				GROUP BY 1, 2)
			SELECT y.start, y."end", y.correlationId, (y.globalPid >> 24) & 16777215, y.deviceId, y.streamId, y.eventId,
			coalesce(e.name, ''), coalesce(c.api, '')
			FROM `+st+` y LEFT JOIN ENUM_CUPTI_SYNC_TYPE e ON e.id = y.syncType
			LEFT JOIN calls c ON c.c = y.correlationId AND c.pid = (y.globalPid >> 24) & 16777215`,
			func(r *sql.Rows) error {
				var x records.Sync
				var enum, api string
				if err := r.Scan(&x.Start, &x.End, &x.Corr, &x.PID, &x.Device, &x.Stream, &x.Event, &enum, &api); err != nil {
					return err
				}
				x.Kind = syncKindOf(versionSuffix.ReplaceAllString(api, ""), enum)
				if x.Stream == 4294967295 || x.Kind == records.SyncEvent || x.Kind == records.SyncContext {
					x.Stream = records.NoID
				}
				if x.Event == 4294967295 {
					x.Event = records.NoID
				}
				return h.Sync(&x)
			})
	}
	if gt := table(t, db, "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"); gt != "" {
		q(`SELECT g.start, g."end", coalesce(g.correlationId, 0), (g.globalPid >> 24) & 16777215, g.deviceId, g.streamId, g.graphId
			FROM `+gt+` g`,
			func(r *sql.Rows) error {
				var x records.GraphLaunch
				if err := r.Scan(&x.Start, &x.End, &x.Corr, &x.PID, &x.Device, &x.Stream, &x.Graph); err != nil {
					return err
				}
				return h.Graph(&x)
			})
	}
	if ev := table(t, db, "CUPTI_ACTIVITY_KIND_CUDA_EVENT"); ev != "" {
		q(`SELECT e.correlationId, (e.globalPid >> 24) & 16777215, e.deviceId, e.streamId, e.eventId, coalesce(e.eventSyncId, 0)
			FROM `+ev+` e`,
			func(r *sql.Rows) error {
				var x records.EventRecord
				if err := r.Scan(&x.Corr, &x.PID, &x.Device, &x.Stream, &x.Event, &x.Seq); err != nil {
					return err
				}
				return h.Event(&x)
			})
	}
	if st := table(t, db, "TARGET_INFO_CUDA_STREAM"); st != "" && h.Stream != nil {
		// The kinds by the names of ENUM_CUPTI_STREAM_TYPE.
		q(`SELECT s.processId, s.contextId, s.streamId, coalesce(e.name, '') FROM `+st+` s
			LEFT JOIN ENUM_CUPTI_STREAM_TYPE e ON e.id = s.flag`,
			func(r *sql.Rows) error {
				var (
					x    records.Stream
					name string
				)
				if err := r.Scan(&x.PID, &x.Context, &x.ID, &name); err != nil {
					return err
				}
				switch strings.TrimPrefix(name, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_") {
				case "DEFAULT":
					x.Kind = records.StreamBlocking
				case "NON_BLOCKING":
					x.Kind = records.StreamNonBlocking
				case "NULL":
					x.Kind = records.StreamNull
				}
				return h.Stream(&x)
			})
	}
}

// buildExport builds the timeline of an export.
func buildExport(t testing.TB, path string, opts timeline.Options) *timeline.Timeline {
	t.Helper()
	b := timeline.NewBuilder(context.Background(), opts)
	readExport(t, path, b.Handler())
	tl, err := b.Finish()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return tl
}

// shared holds the timelines sharedExport built, by export and options.
var shared fixture.Shared[sharedKey, *timeline.Timeline]

type sharedKey struct {
	path string
	opts timeline.Options
}

// sharedExport is buildExport's timeline of the export at path, built on
// first use and shared by the tests after: a replay, a coster and the
// tests only read a timeline. (TestLargeCaptures, which times the build,
// builds its own.)
func sharedExport(t testing.TB, path string, opts timeline.Options) *timeline.Timeline {
	t.Helper()
	return shared.Get(sharedKey{path, opts}, func() *timeline.Timeline { return buildExport(t, path, opts) })
}

func capturePath(name string) string {
	return filepath.Join("..", "testdata", "captures", name, name+".sqlite")
}

// notBacktrace leaves out of the runtime table r the rows nsys writes
// beside a call whose stack it took (nsys profile --cudabacktrace): the
// same correlation id and thread, a span around the call's, no call.
const notBacktrace = `r.eventClass IS NOT (SELECT id FROM ENUM_NSYS_EVENT_CLASS WHERE name = 'TRACE_PROCESS_EVENT_CUDABACKTRACE')`
