package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// secondHost copies every record of the program's process (pid 22) to a
// process of the same pid on another host: its global ids 2^56 higher
// (the hardware bits of nsys's global id), its contexts and streams
// listed on that host (hwId 1), as an export of a job's two nodes holds
// them; the process listed in PROCESSES too (secondHostListed), or not.
const secondHost = `INSERT INTO TARGET_INFO_CUDA_CONTEXT_INFO SELECT nullStreamId, hwId + 1, vmId, processId, deviceId, contextId, parentContextId, isGreenContext FROM TARGET_INFO_CUDA_CONTEXT_INFO WHERE processId = 22;
	INSERT INTO TARGET_INFO_CUDA_STREAM SELECT streamId, hwId + 1, vmId, processId, contextId, priority, flag FROM TARGET_INFO_CUDA_STREAM WHERE processId = 22;
	CREATE TEMP TABLE m AS SELECT * FROM CUPTI_ACTIVITY_KIND_MEMCPY; UPDATE m SET globalPid = globalPid + 72057594037927936;
	INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY SELECT * FROM m;
	CREATE TEMP TABLE k AS SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL; UPDATE k SET globalPid = globalPid + 72057594037927936;
	INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM k;
	CREATE TEMP TABLE s AS SELECT * FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION; UPDATE s SET globalPid = globalPid + 72057594037927936;
	INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SELECT * FROM s;
	CREATE TEMP TABLE n AS SELECT * FROM NVTX_EVENTS; UPDATE n SET globalTid = globalTid + 72057594037927936;
	INSERT INTO NVTX_EVENTS SELECT * FROM n;
	CREATE TEMP TABLE r AS SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME; UPDATE r SET globalTid = globalTid + 72057594037927936;
	INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT * FROM r;
	INSERT INTO ThreadNames SELECT nameId, priority, globalTid + 72057594037927936 FROM ThreadNames WHERE (globalTid >> 24) & 16777215 = 22`

// secondHostListed is secondHost with the second host's process listed in
// PROCESSES as well.
const secondHostListed = secondHost + `;
	INSERT INTO PROCESSES SELECT globalPid + 72057594037927936, pid, name FROM PROCESSES WHERE pid = 22`

// nullable makes column col of table nullable, as an edited export may
// hold it (nsys declares it NOT NULL), through the schema's own text.
func nullable(table, col string) string {
	return `PRAGMA writable_schema = ON; UPDATE sqlite_schema SET sql = replace(sql, '` + col + `                    INTEGER   NOT NULL', '` + col + `                    INTEGER') WHERE name = '` + table + `'; PRAGMA writable_schema = RESET`
}

// forgedName is a capture's name whose newlines would print a verdict of
// their own.
const forgedName = "x\nprediction 1  died      FORGED\n.sqlite"

// forged copies the shipped export to a file named forgedName in dir.
func forged(t *testing.T, dir string) string {
	p := filepath.Join(dir, forgedName)
	writeFile(t, p, readFile(t, copyShipped(t, t.TempDir(), "pinned.sqlite")))
	return p
}

// noForgedLine fails where a file of dir starts a line with the forged
// verdict.
func noForgedLine(t *testing.T, dir string) {
	t.Helper()
	for _, name := range []string{"report.md", "report.html"} {
		for _, l := range strings.Split(string(readFile(t, filepath.Join(dir, name))), "\n") {
			if strings.HasPrefix(l, "prediction 1") {
				t.Errorf("%s holds a line of the capture's name: %q", name, l)
			}
		}
	}
}

// pipelineEdit copies the shipped pipeline-pageable export into dir, runs
// stmt on the copy and returns the audit's arguments (NVIDIA's rule off).
func pipelineEdit(stmt string) func(t *testing.T, dir string) []string {
	return func(t *testing.T, dir string) []string {
		p := filepath.Join(dir, "pipeline-pageable.sqlite")
		writeFile(t, p, readFile(t, "../../testdata/captures/pipeline-pageable/pipeline-pageable.sqlite"))
		db := openRW(t, p)
		mustExec(t, db, stmt)
		recount(t, db)
		db.Close()
		return []string{p, "--nvidia-rule", "off"}
	}
}

// nullstreamEdit is pipelineEdit for the capture whose steps order the
// legacy default stream against a blocking stream.
func nullstreamEdit(stmt string) func(t *testing.T, dir string) []string {
	return func(t *testing.T, dir string) []string {
		p := filepath.Join(dir, "nullstream-pageable.sqlite")
		writeFile(t, p, readFile(t, "../../testdata/captures/nullstream-pageable/nullstream-pageable.sqlite"))
		db := openRW(t, p)
		mustExec(t, db, stmt)
		recount(t, db)
		db.Close()
		return []string{p, "--nvidia-rule", "off"}
	}
}

// ruleToken is a credential planted in NVIDIA's rule's CSV.
const ruleToken = "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123"

// consistencyCases: records that name what the capture does not hold
// (streams, an export schema), that do not fit the calls that issued them
// or the clock, NULLs the order of work rests on, processes told apart by
// their host, a check across two GPUs, regions no CUDA call of their
// thread is in; and around the capture: names that would print lines of
// their own, a token in NVIDIA's rule's CSV, --expect values of no kind.
func consistencyCases() []badCase {
	const records = "records that contradict each other"
	off := []string{"--nvidia-rule", "off"}
	// beforeAfter audits the shipped export against a damaged copy of it.
	beforeAfter := func(stmt string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			before := copyShipped(t, t.TempDir(), "pinned.sqlite")
			return append([]string{before, sqliteEdit(stmt)(t, dir)[0]}, off...)
		}
	}
	expectFile := func(body string, args ...string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			e := filepath.Join(dir, "expect.json")
			writeFile(t, e, []byte(body))
			return append([]string{copyShipped(t, dir, "pinned.sqlite"), "--expect", e}, args...)
		}
	}
	const expects = "audit rates and --expect files"
	return []badCase{
		{group: "audit", name: "audit BEFORE AFTER: BEFORE's NVTX ranges moved to a thread that makes no CUDA call (the genuine fix as AFTER)", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				const pair = "../../testdata/captures/pipeline-"
				p := filepath.Join(dir, "pipeline-pageable.sqlite")
				writeFile(t, p, readFile(t, pair+"pageable/pipeline-pageable.sqlite"))
				db := openRW(t, p)
				mustExec(t, db, `UPDATE NVTX_EVENTS SET globalTid = 281475345809440`)
				db.Close()
				return append([]string{p, pair + "pinned/pipeline-pinned.sqlite"}, off...)
			},
			exit: 1, want: []string{"UNAVAILABLE", "warmup: unavailable: 274.9 ms before, 27.08 ms after (its one instance), not predicted: its NVTX range is on a thread that makes no CUDA call inside it"}},
		{group: "SQLite export", name: "audit: a kernel on a cudaMemcpyAsync call's correlation id (its launch call deleted)", cmd: "audit",
			make: pipelineEdit(`DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId = 132; UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET correlationId = 138 WHERE correlationId = 132`),
			exit: 2, want: []string{"pipeline-pageable.sqlite", `the kernel "process" of process 22 has correlation id 138, the id of a cudaMemcpyAsync call, and that call launches no kernel`}},
		{group: "SQLite export", name: "audit: a synchronisation record on a cudaLaunchKernel call's correlation id", cmd: "audit",
			make: pipelineEdit(`UPDATE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SET correlationId = 132 WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)`),
			exit: 2, want: []string{"pipeline-pageable.sqlite", "a synchronisation record of process 22 has correlation id 132, the id of a cudaLaunchKernel call, and that call waits for nothing"}},
		{group: "SQLite export", name: "audit: an event recording on a cudaLaunchKernel call's correlation id", cmd: "audit",
			make: pipelineEdit(`UPDATE CUPTI_ACTIVITY_KIND_CUDA_EVENT SET correlationId = 132 WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_CUDA_EVENT)`),
			exit: 2, want: []string{"pipeline-pageable.sqlite", "a recording of event 1 of process 22 has correlation id 132, the id of a cudaLaunchKernel call, and that call records no event"}},
		{group: "SQLite export", name: "audit: a stream wait naming, by eventSyncId, a recording of another event", cmd: "audit",
			make: pipelineEdit(`UPDATE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SET eventSyncId = 4 WHERE rowid = 2`),
			exit: 2, want: []string{"pipeline-pageable.sqlite", "waits on event 1 by eventSyncId 4, the id of a recording of event 2 (correlation id 220), not of event 1"}},
		{group: "SQLite export", name: "audit: a stream wait naming, by eventSyncId, a recording made after it returned", cmd: "audit",
			make: pipelineEdit(`UPDATE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SET eventSyncId = 5 WHERE rowid = 2`),
			exit: 2, want: []string{"pipeline-pageable.sqlite", "waits on event 1 by eventSyncId 5, a recording made by correlation id 302"}},
		{group: "SQLite export", name: "audit: two event recordings with one eventSyncId", cmd: "audit",
			make: pipelineEdit(`UPDATE CUPTI_ACTIVITY_KIND_CUDA_EVENT SET eventSyncId = 3 WHERE rowid = 3`),
			exit: 2, want: []string{"pipeline-pageable.sqlite", "has eventSyncId 3, and so does the recording of event 1 by correlation id 218"}},
		{group: "SQLite export", name: "audit: the recording a stream wait names (eventSyncId) deleted, an earlier one of its event kept (once tied to that one in silence)", cmd: "audit",
			make: pipelineEdit(`DELETE FROM CUPTI_ACTIVITY_KIND_CUDA_EVENT WHERE rowid = 3`),
			exit: 1, want: []string{"unresolved: 1 wait naming a recording (by eventSyncId) the trace does not hold before it", "correlation id 303"}},
		{group: "SQLite export", name: "audit: every synchronisation record written again under a new correlation id (once read as the capture itself)", cmd: "audit",
			make: pipelineEdit(`CREATE TEMP TABLE s AS SELECT * FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION; UPDATE s SET correlationId = correlationId + 100000; INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SELECT * FROM s`),
			exit: 2, want: []string{"pipeline-pageable.sqlite", "the synchronisation records of process 22 by correlation ids 134 and 100134 are one record twice (kind event, device 0"}},
		{group: "SQLite export", name: "audit: a stream whose flag (TARGET_INFO_CUDA_STREAM) is no kind CUPTI writes", cmd: "audit",
			make: pipelineEdit(`UPDATE TARGET_INFO_CUDA_STREAM SET flag = 9 WHERE streamId = 13`),
			exit: 2, want: []string{"pipeline-pageable.sqlite", "table TARGET_INFO_CUDA_STREAM, rowid 1: stream 13 has flag 9, which is no stream kind CUPTI writes"}},
		{group: "SQLite export", name: "audit: every stream's kind unknown (flag 0), so which streams the NULL stream orders is unknown (once not said)", cmd: "audit",
			make: pipelineEdit(`UPDATE TARGET_INFO_CUDA_STREAM SET flag = 0`),
			exit: 1, want: []string{"assumed stream-kinds-unknown: the trace does not say how 2 streams of pid 22 were made"}},
		{group: "SQLite export", name: "audit: a blocking stream listed as a second NULL stream of its context (once taken for the NULL stream)", cmd: "audit",
			make: nullstreamEdit(`UPDATE TARGET_INFO_CUDA_STREAM SET flag = 3 WHERE streamId = 13`),
			exit: 1, want: []string{"assumed stream-kinds-unknown: the trace does not say how 4 streams of pid 22 were made"}},
		{group: "SQLite export", name: "audit: a NULL globalTid on one cudaLaunchKernel call (a call of no thread, once read as process 0)", cmd: "audit",
			make: pipelineEdit(`UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = NULL WHERE correlationId = 175`),
			exit: 2, want: []string{"pipeline-pageable.sqlite", "table CUPTI_ACTIVITY_KIND_RUNTIME: column globalTid is NULL in 1 row"}},
		{group: "SQLite export", name: "TARGET_INFO_GPU also lists another host's GPU (a Tesla T4) under the same device ids (once taken for the program's GPU, and a real copy refused as faster than its link)",
			make: sqliteEdit(`CREATE TEMP TABLE g AS SELECT * FROM TARGET_INFO_GPU; UPDATE g SET vmId = 7, name = 'Tesla T4'; INSERT INTO TARGET_INFO_GPU SELECT * FROM g`),
			exit: 0, want: []string{"pinned.sqlite (SQLite export), NVIDIA H200", "prediction 4  held"}},
		{group: "SQLite export", name: "audit: TARGET_INFO_GPU also lists another host's GPU under the same device ids", cmd: "audit",
			make: sqliteEdit(`CREATE TEMP TABLE g AS SELECT * FROM TARGET_INFO_GPU; UPDATE g SET vmId = 7, name = 'Tesla T4'; INSERT INTO TARGET_INFO_GPU SELECT * FROM g`),
			exit: 1, want: []string{"305 copies"}},
		{group: "SQLite export", name: "a NULL globalTid on one API call (once left out of the program's thread unsaid)",
			make: sqliteEdit(`UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = NULL WHERE rowid = 100`),
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_RUNTIME: column globalTid is NULL in 1 row (the first: rowid 100)"}},
		{group: "impossible values", name: "audit: every time shifted by 9.22e18 ns, near the largest int64", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				const by = "9223372030000000000"
				var stmts []string
				for _, tb := range []string{"CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMSET", "NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"} {
					stmts = append(stmts, `UPDATE `+tb+` SET start = start + `+by+`, "end" = "end" + `+by)
				}
				stmts = append(stmts, `UPDATE ANALYSIS_DETAILS SET startTime = startTime + `+by+`, stopTime = stopTime + `+by)
				return append(sqliteEdit(strings.Join(stmts, "; "))(t, dir), off...)
			},
			exit: 2, want: []string{"pinned.sqlite", "a time past 4611686018427387904 ns (2^62 ns, 146 years) on the capture's clock"}},
		{group: "secrets in names", name: "verify --fail-on-exposure: a GitHub token in the API Name of NVIDIA's rule's CSV beside the export",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.sqlite")
				rule := copyShipped(t, dir, "pinned_cuda_memcpy_async.csv")
				writeFile(t, rule, []byte(strings.Replace(string(readFile(t, rule)), "cudaMemcpyAsync_v3020", "cudaMemcpyAsync_v3020 "+ruleToken, 1)))
				return []string{p, "--fail-on-exposure"}
			},
			exit: 3, want: []string{"pinned_cuda_memcpy_async.csv: secret (GitHub token)=ghp_…(40 chars)"}, never: []string{ruleToken}},
		{group: "secrets in names", name: "verify --fail-on-exposure: a GitHub token in the GPU name of the program's results JSON beside the export",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.sqlite")
				res := copyShipped(t, dir, "pinned.results.json")
				writeFile(t, res, []byte(strings.Replace(string(readFile(t, res)), `"NVIDIA H200"`, `"NVIDIA H200 `+ruleToken+`"`, 1)))
				return []string{p, "--fail-on-exposure"}
			},
			exit: 3, want: []string{"pinned.results.json: secret (GitHub token)=ghp_…(40 chars) in pinned.results.json line",
				"not the program's own files: remove it from pinned.results.json before sharing"}, never: []string{ruleToken}},
		{group: "SQLite export", name: "an export of schema 9.0.0, a major version newer than nsyscheck reads",
			make: sqliteEdit(`UPDATE META_DATA_EXPORT SET value = '9.0.0' WHERE name = 'EXPORT_SCHEMA_VERSION'`),
			exit: 0, want: []string{"warning schema-newer: the export's schema version is 9.0.0, a major version newer than 3.20.3"}},
		{group: "SQLite export", name: "audit: an export of schema 9.0.0", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				return append(sqliteEdit(`UPDATE META_DATA_EXPORT SET value = '9.0.0' WHERE name = 'EXPORT_SCHEMA_VERSION'`)(t, dir), off...)
			},
			exit: 1, want: []string{"the export's schema version is 9.0.0, a major version newer than 3.20.3"}},
		{group: "SQLite export", name: "no META_DATA_EXPORT table (its schema version once taken as read, in silence)",
			make: sqliteEdit(`DROP TABLE META_DATA_EXPORT`),
			exit: 0, want: []string{"warning schema-unknown: the export has no META_DATA_EXPORT table, which names its schema version, so what its tables and columns mean is not known"}},
		{group: "SQLite export", name: "audit: a schema version of 'abc' (once taken as read, in silence)", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				return append(sqliteEdit(`UPDATE META_DATA_EXPORT SET value = 'abc' WHERE name = 'EXPORT_SCHEMA_VERSION'`)(t, dir), off...)
			},
			exit: 1, want: []string{`note: schema: the export's schema version (EXPORT_SCHEMA_VERSION in META_DATA_EXPORT) is "abc", not three unsigned numbers`}},
		{group: "SQLite export", name: "a schema version of -1.0.0 (once taken as read, in silence)",
			make: sqliteEdit(`UPDATE META_DATA_EXPORT SET value = '-1.0.0' WHERE name = 'EXPORT_SCHEMA_VERSION'`),
			exit: 0, want: []string{`warning schema-unknown: the export's schema version (EXPORT_SCHEMA_VERSION in META_DATA_EXPORT) is "-1.0.0", not three unsigned numbers`}},
		{group: expects, name: "verify --expect with a verdict that is none (\"HELD\")",
			make: expectFile(`{"claims": {"1.floor": "HELD"}}`),
			exit: 2, want: []string{"expect.json", `claims.1.floor: "HELD" is no verdict (want held, died, unavailable)`}},
		{group: expects, name: "verify --expect with a claim the lesson does not have",
			make: expectFile(`{"claims": {"9.zzz": "held"}}`),
			exit: 2, want: []string{"expect.json", "claims.9.zzz: the lesson has no such claim"}},
		{group: expects, name: "audit --expect with a negative count of copies", cmd: "audit",
			make: expectFile(`{"copies": -1}`, off...),
			exit: 2, want: []string{"expect.json", "copies: -1 is no count (want 0 or more)"}},
		{group: expects, name: "audit --expect with a status NVIDIA's rule never has", cmd: "audit",
			make: expectFile(`{"nvidiaRule": "agreed"}`, off...),
			exit: 2, want: []string{"expect.json", `nvidiaRule: "agreed" is none of agree, disagree, unavailable`}},
		{group: "report output", name: "report of a capture whose name holds newlines and a verdict",
			cmd: "report",
			make: func(t *testing.T, dir string) []string {
				out := t.TempDir()
				t.Cleanup(func() { noForgedLine(t, out) })
				return []string{forged(t, dir), "-o", out}
			},
			exit: 0, want: []string{`x\x0aprediction 1  died      FORGED\x0a.sqlite: `}, never: []string{"\nprediction 1  died"}},
		{group: "report output", name: "scrub of a capture whose name holds newlines and a verdict",
			cmd: "scrub",
			make: func(t *testing.T, dir string) []string {
				return []string{forged(t, dir), "-o", filepath.Join(t.TempDir(), "shared.sqlite")}
			},
			exit: 0, want: []string{`x\x0aprediction 1  died      FORGED\x0a.sqlite`}, never: []string{"\nprediction 1  died"}},
		{group: records, name: "SQLite: a kernel 2 s before the cudaLaunchKernel call that launched it",
			make: sqliteEdit(`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = start - 2000000000, "end" = "end" - 2000000000 WHERE correlationId = 527`),
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_KERNEL", "kernel scaleCopy, correlation id 527", "1999983325 ns before the cudaLaunchKernel call that issued it starts"},
			notHeld: []string{"3"}},
		{group: records, name: "audit BEFORE AFTER: a kernel of AFTER 6 ms before its cudaLaunchKernel call", cmd: "audit",
			make: beforeAfter(`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = start - 6000000, "end" = "end" - 6000000 WHERE correlationId = 527`),
			exit: 2, want: []string{"pinned.sqlite", "kernel scaleCopy, correlation id 527", "before the cudaLaunchKernel call that issued it starts"}},
		{group: records, name: "CSV: a kernel row of cuda_gpu_trace 2 s before its cudaLaunchKernel call", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				early := gpuTraceRowEdit("scaleCopy", func(f []string) {
					start, err := strconv.ParseInt(f[0], 10, 64)
					if err != nil {
						t.Fatal(err)
					}
					f[0] = strconv.FormatInt(start-2000000000, 10)
				})
				return append(early(t, dir), off...)
			},
			exit: 2, want: []string{"pinned_cuda_gpu_trace.csv", "(kernel scaleCopy)", "before the cudaLaunchKernel call that issued it starts"}},
		{group: records, name: "SQLite: the copies moved to stream 777, which TARGET_INFO_CUDA_STREAM does not list",
			make: sqliteEdit(`UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET streamId = 777 WHERE streamId = 7`),
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_MEMCPY: 283 rows name stream 777 (the first: rowid 1), which TARGET_INFO_CUDA_STREAM does not list"},
			notHeld: []string{"1", "2", "4"}},
		{group: records, name: "audit: events recorded on stream 555, which TARGET_INFO_CUDA_STREAM does not list", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				return append(sqliteEdit(`UPDATE CUPTI_ACTIVITY_KIND_CUDA_EVENT SET streamId = 555`)(t, dir), off...)
			},
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_CUDA_EVENT: 46 rows name stream 555"}},
		{group: records, name: "SQLite: a NULL streamId on every kernel (the column made nullable)",
			make: sqliteEdit(nullable("CUPTI_ACTIVITY_KIND_KERNEL", "streamId") + `; UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET streamId = NULL`),
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_KERNEL: column streamId is NULL in 28 rows"}, notHeld: []string{"3"}},
		{group: records, name: "audit: a NULL streamId on every synchronisation record (the column made nullable)", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				return append(sqliteEdit(nullable("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "streamId")+`; UPDATE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SET streamId = NULL`)(t, dir), off...)
			},
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: column streamId is NULL in 45 rows"}},
		{group: records, name: "audit BEFORE AFTER: AFTER captured on another GPU (TARGET_INFO_GPU names an H200 NVL)", cmd: "audit",
			make: beforeAfter(`UPDATE TARGET_INFO_GPU SET name = 'NVIDIA H200 NVL', uuid = 'GPU-0b1c', busLocation = '0000:01:00.0'`),
			exit: 2, want: []string{"pinned.sqlite", "AFTER was captured on NVIDIA H200 NVL, BEFORE on NVIDIA H200", "capture AFTER on BEFORE's machine"}},
		{group: records, name: "SQLite: the program's process again on a second host (the same pid, its own calls and copies: two processes, not two traces)",
			make: sqliteEdit(secondHostListed),
			exit: 0, want: []string{"prediction 1  held", "(thread 22 of process 16777238"}},
		{group: records, name: "audit: the program's process again on a second host", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				return append(sqliteEdit(secondHostListed)(t, dir), "--nvidia-rule", "off")
			},
			exit: 1, want: []string{"610 copies"}},
		{group: records, name: "audit: the program's process again on a second host, which its contexts name (hwId 1) and PROCESSES does not (once refused as one process's calls twice, by pid)", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				return append(sqliteEdit(secondHost)(t, dir), "--nvidia-rule", "off")
			},
			exit: 1, want: []string{"610 copies"}},
		{group: records, name: "audit: the program's process again on a second host whose contexts are not listed (once taken for the first host's by pid)", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				return append(sqliteEdit(secondHostListed+`; DELETE FROM TARGET_INFO_CUDA_CONTEXT_INFO WHERE hwId = 1`)(t, dir), "--nvidia-rule", "off")
			},
			exit: 2, want: []string{"of process 22 (the pid in globalPid) on host hwId 1, vmId 1 (in globalPid)", "which TARGET_INFO_CUDA_CONTEXT_INFO does not list among the program's contexts"}},
		{group: records, name: "audit: the context list on another host (hwId 3, vmId 4; once matched by pid alone)", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				return append(sqliteEdit(`UPDATE TARGET_INFO_CUDA_CONTEXT_INFO SET hwId = 3, vmId = 4`)(t, dir), "--nvidia-rule", "off")
			},
			exit: 2, want: []string{"on host hwId 0, vmId 1 (in globalPid)", "which TARGET_INFO_CUDA_CONTEXT_INFO does not list among the program's contexts"}},
	}
}
