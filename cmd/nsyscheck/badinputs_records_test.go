package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// asyncCopies selects the copies of the cudaMemcpyAsync calls.
const asyncCopies = `correlationId IN (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE nameId IN ` + asyncIDs + `)`

// awsKey is a credential planted in a capture's strings.
const awsKey = "AKIAIOSFODNN7EXAMPLE"

// plantKey plants awsKey in the string table.
const plantKey = `UPDATE StringIds SET value = value || ' ` + awsKey + `' WHERE id = (SELECT min(id) FROM StringIds)`

// recordCases: what is missing is never counted as zero, records that
// contradict each other or physics are never held, tables that are not
// what nsys writes are refused, JSON nested without end is refused before
// it is read, and an audit's check read back must be what its numbers
// give. Each is made from the shipped captures, damaged the way the
// row says.
func recordCases() []badCase {
	off := []string{"--nvidia-rule", "off"}
	audit := func(mk func(t *testing.T, dir string) []string, extra ...string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string { return append(mk(t, dir), append(extra, off...)...) }
	}
	// beforeAfter audits the shipped export against a damaged copy of it.
	beforeAfter := func(stmt string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			before := copyShipped(t, t.TempDir(), "pinned.sqlite")
			return append([]string{before, sqliteEdit(stmt)(t, dir)[0]}, off...)
		}
	}
	const missing, records, tables, jsons = "missing is not zero", "records that contradict each other", "tables that are not what nsys writes", "JSON nested without end, and audits edited"
	cases := []badCase{
		// Missing is not zero.
		{group: missing, name: "audit: no CUPTI_ACTIVITY_KIND_MEMCPY table", cmd: "audit",
			make: audit(sqliteEdit(`DROP TABLE CUPTI_ACTIVITY_KIND_MEMCPY`)),
			exit: 2, want: []string{"pinned.sqlite", "the audit is unavailable: the capture holds no memory copy records (the export has no CUPTI_ACTIVITY_KIND_MEMCPY table"}},
		{group: missing, name: "audit: the copy table emptied", cmd: "audit",
			make: audit(sqliteEdit(`DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY`)),
			exit: 2, want: []string{"pinned.sqlite", "the audit is unavailable: the capture holds no memory copy records (table CUPTI_ACTIVITY_KIND_MEMCPY holds no copy)"}},
		{group: missing, name: "audit: a NULL globalPid on every copy (no copy joins its call)", cmd: "audit",
			make: audit(sqliteEdit(`UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET globalPid = NULL`)),
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_MEMCPY", "the audit is unavailable: 305 of the 305 copies join no API call"}},
		{group: missing, name: "audit BEFORE AFTER: a NULL globalPid on AFTER's cudaMemcpyAsync copies", cmd: "audit",
			make: beforeAfter(`UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET globalPid = NULL WHERE ` + asyncCopies),
			exit: 2, want: []string{"pinned.sqlite", "the audit is unavailable: 22 of the 305 copies join no API call"}},
		{group: missing, name: "audit: the copy records of every cudaMemcpyAsync call deleted (calls without copies)", cmd: "audit",
			make: audit(sqliteEdit(`DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE ` + asyncCopies)),
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_MEMCPY",
				"the audit is unavailable: 22 of the 305 copy calls in CUPTI_ACTIVITY_KIND_RUNTIME have no copy record (22 cudaMemcpyAsync)"}},
		{group: missing, name: "audit: one copy record of 305 deleted (a few calls without copies, and nsys's count of the events it collected says so: a warning)", cmd: "audit",
			make: audit(sqliteEdit(`DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE ` + asyncCopies + `)`)),
			exit: 1, want: []string{"warning copy-calls-uncopied: 1 of the 305 copy calls have no copy record (1 cudaMemcpyAsync)"}},
		{group: missing, name: "one copy record of 305 deleted after the capture (nsys's count of the events it collected kept)",
			make: sqliteRaw(`DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE ` + asyncCopies + `)`),
			exit: 2, want: []string{"pinned.sqlite: table DIAGNOSTIC_EVENT: nsys says it collected 809 CUDA events, and the export holds 808 records of them (474 API calls, 28 kernels, 304 memory copies, 2 memsets): 1 fewer than nsys collected"}},
		{group: missing, name: "one kernel record of 28 deleted after the capture (its launch names no kernel; nsys's count kept)",
			make: sqliteRaw(`DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL)`),
			exit: 2, want: []string{"pinned.sqlite: table DIAGNOSTIC_EVENT", "(474 API calls, 27 kernels, 305 memory copies, 2 memsets): 1 fewer than nsys collected"}},
		{group: missing, name: "audit: every fourth kernel record deleted after the capture (nsys's count kept)", cmd: "audit",
			make: audit(sqliteRaw(`DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid % 4 = 0`)),
			exit: 2, want: []string{"pinned.sqlite: table DIAGNOSTIC_EVENT", "(474 API calls, 21 kernels, 305 memory copies, 2 memsets): 7 fewer than nsys collected"}},
		{group: missing, name: "one kernel record of 28 deleted in an export of another schema (3.19.0: what its count counts is not known, so the records are not held to it)",
			make: sqliteRaw(`DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL);
				UPDATE META_DATA_EXPORT SET value = '3.19.0' WHERE name = 'EXPORT_SCHEMA_VERSION'`),
			exit: 0, want: []string{"prediction 3  held"}},
		{group: records, name: "a kernel record added after the capture, on a correlation id of its own (nsys's count kept)",
			make: sqliteRaw(`INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL);
				UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET correlationId = 9999999 WHERE rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL)`),
			exit: 2, want: []string{"pinned.sqlite: table DIAGNOSTIC_EVENT", "(474 API calls, 29 kernels, 305 memory copies, 2 memsets): 1 more than nsys collected"}},
		{group: missing, name: "audit BEFORE AFTER: AFTER without its copy table", cmd: "audit",
			make: beforeAfter(`DROP TABLE CUPTI_ACTIVITY_KIND_MEMCPY`),
			exit: 2, want: []string{"pinned.sqlite", "the audit is unavailable"}},
		{group: missing, name: "verify --fail-on-exposure: a NULL globalTid (a nullable column) and an AWS key in the strings",
			make: func(t *testing.T, dir string) []string {
				p := sqliteEdit(plantKey+`; UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = NULL WHERE rowid = 1`)(t, dir)[0]
				return []string{p, "--fail-on-exposure"}
			},
			exit: 3, want: []string{"(AWS access key id)=AKIA…(20 chars) in table StringIds"}, never: []string{awsKey}},
		{group: missing, name: "verify --fail-on-exposure: a PROCESSES table the scan cannot read, and an AWS key in the strings",
			make: func(t *testing.T, dir string) []string {
				p := sqliteEdit(plantKey+`; UPDATE PROCESSES SET pid = 'twenty-two'`)(t, dir)[0]
				return []string{p, "--fail-on-exposure"}
			},
			exit: 3, want: []string{"capture-scan-failed", "table PROCESSES", "(AWS access key id)=AKIA…(20 chars)"}, never: []string{awsKey}},

		// Records that contradict each other, or physics.
		{group: records, name: "SQLite: copies that start before their calls",
			make: sqliteEdit(`UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET start = start - 100000, "end" = "end" - 100000 WHERE ` + asyncCopies),
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_MEMCPY", "before the cudaMemcpyAsync call that issued it starts"},
			notHeld: []string{"2", "4"}},
		{group: records, name: "SQLite: copies that end after the cudaStreamSynchronize that waited for them",
			make: sqliteEdit(`UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET "end" = "end" + 50000000 WHERE ` + asyncCopies),
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "after the stream synchronisation", "a copy cannot outlast the wait for it"},
			notHeld: []string{"2", "4"}},
		{group: records, name: "SQLite: every copy record twice",
			make: sqliteEdit(`INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY SELECT * FROM CUPTI_ACTIVITY_KIND_MEMCPY`),
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_MEMCPY", "a second copy of the cudaMemcpy call with this correlation id"},
			notHeld: []string{"1", "2", "3", "4"}},
		{group: records, name: "SQLite: 78 copies and their calls made 20 times shorter (974 GB/s over the H200's PCIe 5.0 x16)",
			make: sqliteEdit(`UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET "end" = start + ("end" - start) / 20 WHERE correlationId BETWEEN 224 AND 301;
				UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET "end" = start + ("end" - start) / 20 WHERE correlationId BETWEEN 224 AND 301`),
			exit: 2, want: []string{"pinned.sqlite", "impossible: 974.5 GB/s over a link of 63.02 GB/s (PCIe 5.0 x16 of the NVIDIA H200"},
			notHeld: []string{"1"}},
		{group: records, name: "SQLite: a copy moved onto a later one on its stream",
			make: sqliteEdit(`UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET start = start + 30000000, "end" = "end" + 30000000 WHERE rowid = 1`),
			exit: 2, want: []string{"pinned.sqlite", "stream 7 of process 22, device 0", "where a stream runs one copy at a time"},
			notHeld: []string{"1"}},
		{group: records, name: "SQLite: a copy given twice, the second on a stream of its own",
			make: sqliteEdit(`INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, "end", deviceId, contextId, streamId, correlationId, globalPid, bytes, copyKind, srcKind, dstKind)
				SELECT start, "end", deviceId, contextId, 99, correlationId, globalPid, bytes, copyKind, srcKind, dstKind FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE ` + asyncCopies + ` LIMIT 1;
				INSERT INTO TARGET_INFO_CUDA_STREAM VALUES (99, 0, 1, 22, 1, 0, 2)`),
			exit: 2, want: []string{"pinned.sqlite", "correlation id 476", "a second copy of the cudaMemcpyAsync call"},
			notHeld: []string{"2", "4"}},
		{group: records, name: "SQLite: a copy whose cudaMemcpyAsync call returned an error",
			make: sqliteEdit(`UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET returnValue = 1 WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE nameId IN ` + asyncIDs + `)`),
			exit: 2, want: []string{"pinned.sqlite", "returned error 1, yet the copy ran"},
			notHeld: []string{"2", "4"}},
		{group: records, name: "SQLite: a cudaFree moved 10 s past the trace's stop",
			make: sqliteEdit(`UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = start + 10000000000, "end" = "end" + 10000000000
				WHERE rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE nameId IN (SELECT id FROM StringIds WHERE value LIKE 'cudaFree%'))`),
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_RUNTIME", "after the trace stopped (3204708108 ns, ANALYSIS_DETAILS)"}},
		{group: records, name: "SQLite: ENUM_CUDA_MEMCPY_OPER recreated with an id defined twice",
			make: sqliteEdit(`CREATE TABLE e AS SELECT * FROM ENUM_CUDA_MEMCPY_OPER; DROP TABLE ENUM_CUDA_MEMCPY_OPER;
				CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER, name TEXT, label TEXT); INSERT INTO ENUM_CUDA_MEMCPY_OPER SELECT * FROM e;
				INSERT INTO ENUM_CUDA_MEMCPY_OPER SELECT id, 'CUDA_MEMCPY_KIND_DTOH', label FROM e WHERE name LIKE '%HTOD'; DROP TABLE e`),
			exit: 2, want: []string{"pinned.sqlite", "table ENUM_CUDA_MEMCPY_OPER", "is defined twice"}},
		{group: records, name: "SQLite: ENUM_CUDA_MEMCPY_OPER naming id 2 CUDA_MEMCPY_KIND_HTOD as well as id 1 (once the device-to-host copies read as host-to-device, every prediction held)",
			make: sqliteEdit(`UPDATE ENUM_CUDA_MEMCPY_OPER SET name = 'CUDA_MEMCPY_KIND_HTOD' WHERE id = 2`),
			exit: 2, want: []string{"pinned.sqlite", "table ENUM_CUDA_MEMCPY_OPER: CUDA_MEMCPY_KIND_HTOD is defined at two ids, 1 and 2"},
			notHeld: []string{"1", "2", "3", "4"}},
		{group: records, name: "audit: ENUM_CUPTI_SYNC_TYPE naming id 3 (stream synchronisation) as event synchronisation, id 1's name (once audited)", cmd: "audit",
			make: audit(sqliteEdit(`UPDATE ENUM_CUPTI_SYNC_TYPE SET name = 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE' WHERE id = 3`)),
			exit: 2, want: []string{"pinned.sqlite", "table ENUM_CUPTI_SYNC_TYPE: CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE is defined at two ids, 1 and 3"}},
		{group: records, name: "SQLite: the h2d-pinned NVTX range moved to end inside d2h-pageable (ranges that do not nest)",
			make: sqliteEdit(`UPDATE NVTX_EVENTS SET "end" = "end" + 200000000 WHERE text = 'h2d-pinned'`),
			exit: 2, want: []string{"pinned.sqlite", "table NVTX_EVENTS", "overlap without one holding the other"},
			notHeld: []string{"1"}},
		{group: records, name: "audit: cuda_gpu_trace with a stream id that is not a number", cmd: "audit",
			make: audit(gpuTraceEdit(func(f []string) { f[19] = "seven" })),
			exit: 2, want: []string{"pinned_cuda_gpu_trace.csv", "data row 1", `column "Strm"`, "not an integer id"}},
		{group: records, name: "CSV: cuda_api_trace cut short at the end of a row",
			make: csvEdit(func(s string) string { return strings.Join(strings.SplitAfter(s, "\n")[:400], "") }),
			exit: 2, want: []string{"pinned_cuda_api_trace.csv", "it holds 269 cudaMemcpy calls where pinned_cuda_api_sum.csv counts 283"},
			notHeld: []string{"1", "2", "4"}},
		{group: records, name: "audit: cuda_gpu_trace cut short at the end of a row", cmd: "audit",
			make: audit(func(t *testing.T, dir string) []string {
				auditCSV(t, dir)
				p := filepath.Join(dir, "pinned_cuda_gpu_trace.csv")
				writeFile(t, p, []byte(strings.Join(strings.SplitAfter(string(readFile(t, p)), "\n")[:200], "")))
				return []string{dir}
			}),
			exit: 2, want: []string{"pinned_cuda_gpu_trace.csv", "it holds 133 HtoD copies where pinned_cuda_gpu_mem_time_sum.csv counts 156"}},
		{group: records, name: "SQLite: every cudaMemcpyAsync call twice",
			make: sqliteEdit(`INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE nameId IN ` + asyncIDs),
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_RUNTIME", "another API call of process 22 has the same correlation id"},
			notHeld: []string{"2", "4"}},
		{group: records, name: "audit: every cudaMemcpyAsync call twice", cmd: "audit",
			make: audit(sqliteEdit(`INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE nameId IN ` + asyncIDs)),
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_RUNTIME", "another API call of process 22 has the same correlation id"}},
		{group: records, name: "SQLite: a second capture's trace joined to the first, 1 ns later",
			make: sqliteEdit(`INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, "end", eventClass, globalTid, correlationId, nameId, returnValue)
					SELECT start + 1, "end" + 1, eventClass, globalTid, correlationId + 1000000, nameId, returnValue FROM CUPTI_ACTIVITY_KIND_RUNTIME;
				INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, "end", deviceId, contextId, streamId, correlationId, globalPid, bytes, copyKind, srcKind, dstKind)
					SELECT start + 1, "end" + 1, deviceId, contextId, streamId, correlationId + 1000000, globalPid, bytes, copyKind, srcKind, dstKind FROM CUPTI_ACTIVITY_KIND_MEMCPY`),
			exit: 2, want: []string{"pinned.sqlite", "thread 22/22", "where a thread makes one call at a time"},
			notHeld: []string{"1", "2", "3", "4"}},
		{group: records, name: "SQLite: every kernel record twice",
			make: sqliteEdit(`INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL`),
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_KERNEL", "where one launch runs one kernel"},
			notHeld: []string{"3"}},
		{group: records, name: "SQLite: a cudaMemcpyAsync whose nameId names no string (a dangling reference)",
			make: sqliteEdit(`UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET nameId = 999999 WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE nameId IN ` + asyncIDs + `)`),
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_RUNTIME", "nameId 999999 names no string of StringIds"},
			notHeld: []string{"2", "4"}},
		{group: records, name: "SQLite: a copy of an unknown copyKind",
			make: sqliteEdit(`UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET copyKind = 77 WHERE rowid = 5`),
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_MEMCPY", "copyKind 77 is not one of the ids ENUM_CUDA_MEMCPY_OPER defines"}},
		{group: records, name: "SQLite: pinned copies of 256 MiB in 1 ns (268,435,456 GB/s)",
			make: sqliteEdit(`UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET "end" = start + 1 WHERE bytes = 268435456`),
			exit: 2, want: []string{"pinned.sqlite", "268435456 bytes in 1 ns: impossible: 2.684e+08 GB/s over a link of 63.02 GB/s (PCIe 5.0 x16 of the NVIDIA H200"},
			notHeld: []string{"1.floor", "1"}},
		{group: records, name: "audit: cuda_gpu_trace with a copy of 268 MB in 1 ns", cmd: "audit",
			make: audit(gpuTraceEdit(func(f []string) { f[1] = "1" })),
			exit: 2, want: []string{"pinned_cuda_gpu_trace.csv", "data row 1 (memory copy HtoD)", "impossible: 2.684e+08 GB/s over a link of 63.02 GB/s (PCIe 5.0 x16 of the NVIDIA H200"}},
		{group: records, name: "CSV: cuda_api_trace with its header again inside (two reports in one file)",
			make: csvEdit(func(s string) string { return s + s }),
			exit: 2, want: []string{"pinned_cuda_api_trace.csv", "the header again, inside the report"},
			notHeld: []string{"2", "4"}},
		{group: records, name: "CSV: cuda_api_trace with a second capture's rows after its own (no second header)",
			make: csvEdit(func(s string) string {
				_, body, _ := strings.Cut(s, "\n")
				return s + body
			}),
			exit: 2, want: []string{"pinned_cuda_api_trace.csv", "another API call of process 22 has the same correlation id"},
			notHeld: []string{"2", "4"}},
		{group: records, name: "CSV: a negative duration on a cudaMalloc row, which verify does not read (verify and audit both refuse it)",
			make: csvEdit(func(s string) string { return strings.Replace(s, ",175450,cudaMalloc,", ",-175450,cudaMalloc,", 1) }),
			exit: 2, want: []string{"pinned_cuda_api_trace.csv", "data row 5", "duration is not a non-negative number"}},
		{group: records, name: "audit: a negative duration on a cudaMalloc row", cmd: "audit",
			make: audit(csvEdit(func(s string) string { return strings.Replace(s, ",175450,cudaMalloc,", ",-175450,cudaMalloc,", 1) })),
			exit: 2, want: []string{"pinned_cuda_api_trace.csv", "data row 5", "duration is not a non-negative number"}},
		{group: records, name: "results JSON: pinned times a billion times too short (the rate its bytes give, 55e9 GB/s)",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.results.json")
				writeFile(t, p, []byte(strings.Replace(string(readFile(t, p)), `"ms": 4.859376,`, `"ms": 4.859376e-9,`, 1)))
				return []string{p}
			},
			exit: 2, want: []string{"pinned.results.json", "h2d pinned copy of 268435456 bytes", "bandwidth impossible: 5.524e+10 GB/s over a link of 63.02 GB/s (PCIe 5.0 x16 of the NVIDIA H200"},
			notHeld: []string{"1.floor", "1"}},
		{group: records, name: "results JSON: a pinned time that contradicts its own GB/s (1000 times too long)",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.results.json")
				writeFile(t, p, []byte(strings.Replace(string(readFile(t, p)), `"ms": 4.859376,`, `"ms": 4859.376,`, 1)))
				return []string{p}
			},
			exit: 2, want: []string{"pinned.results.json", "55.2407 GB/s contradicts its own 268435456 bytes in 4859.376 ms"},
			notHeld: []string{"1.floor", "1"}},
		{group: records, name: "transcript: a pinned rate a billion times its bytes over its time",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.transcript.txt")
				writeFile(t, p, []byte(strings.Replace(string(readFile(t, p)), "4.859 ms    55.2 GB/s", "4.859 ms    55.2e9 GB/s", 1)))
				return []string{p}
			},
			exit: 2, want: []string{"pinned.transcript.txt", "bandwidth impossible: 5.52e+10 GB/s over a link of 63.02 GB/s (PCIe 5.0 x16 of the NVIDIA H200"},
			notHeld: []string{"1.floor", "1"}},

		// Tables that are not what nsys writes.
		{group: tables, name: "a recursive view named CUPTI_ACTIVITY_KIND_RUNTIME_V9",
			make: sqliteEdit(`CREATE VIEW CUPTI_ACTIVITY_KIND_RUNTIME_V9 AS WITH RECURSIVE r(start, "end", nameId) AS
				(SELECT start, "end", nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME UNION ALL SELECT start + 1, "end" + 1, nameId FROM r) SELECT * FROM r`),
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_RUNTIME_V9: a view, not a table"}},
		{group: tables, name: "audit: a recursive view named CUPTI_ACTIVITY_KIND_RUNTIME_V9", cmd: "audit",
			make: audit(sqliteEdit(`CREATE VIEW CUPTI_ACTIVITY_KIND_RUNTIME_V9 AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n AS start FROM r`)),
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_RUNTIME_V9: a view, not a table"}},
		{group: tables, name: "an empty CUPTI_ACTIVITY_KIND_RUNTIME_V9 beside the table that holds the calls",
			make: sqliteEdit(`CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME_V9 AS SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME LIMIT 0`),
			exit: 0, want: []string{"prediction 2 held", "prediction 4 held"}},
		{group: tables, name: "CUPTI_ACTIVITY_KIND_RUNTIME_V2 and CUPTI_ACTIVITY_KIND_RUNTIME both holding calls",
			make: sqliteEdit(`CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME_V2 AS SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME`),
			exit: 2, want: []string{"pinned.sqlite", "both CUPTI_ACTIVITY_KIND_RUNTIME_V2 and CUPTI_ACTIVITY_KIND_RUNTIME hold rows"}},
		{group: tables, name: "the runtime table as CUPTI_ACTIVITY_KIND_RUNTIME_V3, its calls ending before they start (the message names the table read)",
			make: sqliteEdit(`ALTER TABLE CUPTI_ACTIVITY_KIND_RUNTIME RENAME TO CUPTI_ACTIVITY_KIND_RUNTIME_V3;
				UPDATE CUPTI_ACTIVITY_KIND_RUNTIME_V3 SET "end" = start - 5 WHERE nameId IN ` + asyncIDs),
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_RUNTIME_V3", "ends before it starts"}},
		{group: tables, name: "a CUPTI_ACTIVITY_KIND_MEMCPY whose start column is declared TEXT",
			make: sqliteEdit(`CREATE TABLE m AS SELECT * FROM CUPTI_ACTIVITY_KIND_MEMCPY; DROP TABLE CUPTI_ACTIVITY_KIND_MEMCPY;
				CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start TEXT, "end" INTEGER, deviceId INTEGER, contextId INTEGER, streamId INTEGER,
					correlationId INTEGER, globalPid INTEGER, bytes INTEGER, copyKind INTEGER, srcKind INTEGER, dstKind INTEGER);
				INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY SELECT start, "end", deviceId, contextId, streamId, correlationId, globalPid, bytes, copyKind, srcKind, dstKind FROM m;
				DROP TABLE m`),
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_MEMCPY", `column start is declared "TEXT"`}},

		// JSON nested without end; audits edited after they were written.
		{group: jsons, name: "a 30 MB results JSON of nested brackets beside the capture",
			make: func(t *testing.T, dir string) []string {
				copyShipped(t, dir, "pinned.sqlite")
				writeFile(t, filepath.Join(dir, "pinned.results.json"), nestedBrackets())
				return []string{dir}
			},
			exit: 0, want: []string{"pinned.results.json", "was set aside", "nested more than 64 levels deep"}},
		{group: jsons, name: "a 60 MB string inside the results JSON beside the capture (peak RSS in docs/performance.md)",
			make: func(t *testing.T, dir string) []string {
				copyShipped(t, dir, "pinned.sqlite")
				shipped := string(readFile(t, filepath.Join(shippedDir, "pinned.results.json")))
				writeFile(t, filepath.Join(dir, "pinned.results.json"), []byte(`{"pad": "`+strings.Repeat("x", 60e6)+`", `+shipped[strings.Index(shipped, "{")+1:]))
				return []string{dir}
			},
			exit: 0, want: []string{"pinned.results.json", "was set aside", "a string longer than 64 KiB"}},
		{group: jsons, name: "report of a 30 MB JSON of nested brackets", cmd: "report",
			make: func(t *testing.T, dir string) []string {
				p := filepath.Join(dir, "deep.json")
				writeFile(t, p, nestedBrackets())
				return []string{p, "-o", filepath.Join(t.TempDir(), "out")}
			},
			exit: 2, want: []string{"deep.json: byte 64: objects and arrays nested more than 64 levels deep"}},
		{group: jsons, name: "verify --expect of nested brackets",
			make: func(t *testing.T, dir string) []string {
				e := filepath.Join(dir, "expect.json")
				writeFile(t, e, nestedBrackets())
				return []string{copyShipped(t, dir, "pinned.sqlite"), "--expect", e}
			},
			exit: 2, want: []string{"expect.json: byte 64: objects and arrays nested more than 64 levels deep"}},
		{group: jsons, name: "report of an audit JSON whose check says held beside numbers that say died", cmd: "report",
			make: editedAudit(func(results []map[string]any, check map[string]any) { check["verdict"] = "held" }),
			exit: 2, want: []string{"audit.json", "the check's verdict is held, but the numbers of its two audits give died"}},
		{group: jsons, name: "report of an audit JSON whose check's host time after was edited", cmd: "report",
			make: editedAudit(func(results []map[string]any, check map[string]any) { check["htodAfterNs"] = 1.0 }),
			exit: 2, want: []string{"audit.json", "the check's htodAfterNs is not what its two audits give"}},
	}
	return cases
}

// nestedBrackets is 30 MB of JSON arrays nested 15 million deep.
func nestedBrackets() []byte {
	n := 15 << 20
	return []byte(strings.Repeat("[", n) + strings.Repeat("]", n))
}

// editedAudit writes the JSON of the training captures' audit before and
// after the fix, edited by edit, and returns report's arguments for it.
// Taken to pin in place, the pair's steps die (slower than predicted), so
// its check has a verdict of its own to contradict.
func editedAudit(edit func(results []map[string]any, check map[string]any)) func(t *testing.T, dir string) []string {
	return func(t *testing.T, dir string) []string {
		t.Helper()
		captures := "../../testdata/captures/"
		code, out, stderr := runMain(t, []string{"audit", captures + "train-pageable", captures + "train-pinned", "--format", "json", "--nvidia-rule", "off",
			"--pin-by", "in-place"})
		if code != exitDied || !strings.Contains(out, `"verdict": "died"`) {
			t.Fatalf("audit of the training pair, whose check dies: %d %s", code, stderr)
		}
		var env map[string]any
		if err := json.Unmarshal([]byte(out), &env); err != nil {
			t.Fatal(err)
		}
		var results []map[string]any
		for _, r := range env["results"].([]any) {
			results = append(results, r.(map[string]any))
		}
		edit(results, env["check"].(map[string]any))
		b, err := json.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "audit.json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return []string{p, "-o", filepath.Join(t.TempDir(), "out")}
	}
}
