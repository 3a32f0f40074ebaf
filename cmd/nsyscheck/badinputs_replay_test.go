package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// shippedEdit copies the shipped export rel (under testdata/captures) into
// dir, runs the statements on the copy (nsys's count of the events it
// collected following them) and returns the audit's arguments (NVIDIA's
// rule off).
func shippedEdit(rel string, stmts ...string) func(t *testing.T, dir string) []string {
	return func(t *testing.T, dir string) []string {
		p := filepath.Join(dir, filepath.Base(rel))
		writeFile(t, p, readFile(t, filepath.Join("../../testdata/captures", rel)))
		db := openRW(t, p)
		mustExec(t, db, stmts...)
		recount(t, db)
		db.Close()
		return []string{p, "--nvidia-rule", "off"}
	}
}

// replayCases: the records the replay's dependencies rest on
// (synchronisations, event recordings, graph launches, migrations) that
// contradict each other or name what nsys never writes, a check whose
// AFTER lacks a region BEFORE judged, and --expect files holding more than
// one value or values of no kind. Each is made from a shipped capture,
// damaged the way the row says.
func replayCases() []badCase {
	const expects = "audit rates and --expect files"
	// pipelineExpect writes body as the expectation of the shipped
	// pipeline-pageable export, copied into dir.
	pipelineExpect := func(body string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			e := filepath.Join(dir, "expect.json")
			writeFile(t, e, []byte(body))
			return append(pipelineEdit(`SELECT 1`)(t, dir), "--expect", e)
		}
	}
	const records = "records that contradict each other"
	// pipelinePair audits the shipped pipeline-pageable export against a
	// copy of pipeline-pinned, damaged by the statements.
	pipelinePair := func(stmts ...string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			after := shippedEdit("pipeline-pinned/pipeline-pinned.sqlite", stmts...)(t, dir)
			return append([]string{"../../testdata/captures/pipeline-pageable/pipeline-pageable.sqlite"}, after...)
		}
	}
	// countEdit is pipelineEdit without the recount: the statement damages
	// nsys's own count of the CUDA events it collected.
	countEdit := func(stmt string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			p := filepath.Join(dir, "pipeline-pageable.sqlite")
			writeFile(t, p, readFile(t, "../../testdata/captures/pipeline-pageable/pipeline-pageable.sqlite"))
			db := openRW(t, p)
			mustExec(t, db, stmt)
			db.Close()
			return []string{p, "--nvidia-rule", "off"}
		}
	}
	const counted = `UPDATE DIAGNOSTIC_EVENT SET text = 'Number of CUDA events collected: ' || char(9) || `
	const countRow = ` WHERE text LIKE 'Number of CUDA events collected%'`
	const jsons = "JSON nested without end, and audits edited"
	return []badCase{
		{group: jsons, name: "report of an audit JSON whose copy count (7) contradicts its classes", cmd: "report",
			make: editedAudit(func(results []map[string]any, check map[string]any) { results[0]["copies"] = 7 }),
			exit: 2, want: []string{"audit.json", "copies is 7, but its classes hold 207 copies: the file was edited"}},
		maskedReport(),
		{group: jsons, name: "report of an audit JSON holding a count of copies twice in one object (once read as the last)", cmd: "report",
			make: func(t *testing.T, dir string) []string {
				args := editedAudit(func([]map[string]any, map[string]any) {})(t, dir)
				b := readFile(t, args[0])
				writeFile(t, args[0], []byte(strings.Replace(string(b), `"copies":`, `"copies":7,"copies":`, 1)))
				return args
			},
			exit: 2, want: []string{"audit.json", "results[0].callSites.pageable.copies is given twice in one object, which no audit writes"}},
		{group: "audit", name: "audit BEFORE AFTER: AFTER's region pass renamed pass2 (once held on warmup alone)", cmd: "audit",
			make: pipelinePair(`UPDATE NVTX_EVENTS SET text = 'pass2' WHERE text = 'pass'`),
			exit: 1, want: []string{"UNAVAILABLE", "unavailable: the capture after has no region pass, which the check judges (renamed, or its ranges gone), so the fix cannot be checked there; --match pass=NAME"}},
		{group: "audit", name: "audit: a range name holding a newline, once a row of its own in the region table", cmd: "audit",
			make: pipelineEdit(`UPDATE NVTX_EVENTS SET text = 'pass' || char(10) || 'warmup  1  median  1.000' WHERE text = 'pass'`),
			exit: 1, want: []string{`pass\x0awarmup  1  median  1.000  5  median  275.7`}, never: []string{"\nwarmup  1  median  1.000"}},
		{group: "audit", name: "audit --format markdown: a range name holding a newline and a heading, once a heading of its own", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				return append(pipelineEdit(`UPDATE NVTX_EVENTS SET text = 'pass' || char(10) || '# Check: held' WHERE text = 'pass'`)(t, dir), "--format", "markdown")
			},
			exit: 1, want: []string{`pass # Check: held: 275.7 ms now`}, never: []string{"\n# Check: held"}},
		{group: "audit", name: "audit --format markdown: a range name holding a Markdown link and code (once a link of the capture's making)", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				return append(pipelineEdit("UPDATE NVTX_EVENTS SET text = 'pass [docs](http://example.com) `x`' WHERE text = 'pass'")(t, dir), "--format", "markdown")
			},
			exit: 1, want: []string{`pass \[docs\](http://example.com) \` + "`" + `x\` + "`" + `: 275.7 ms now`}, never: []string{"[docs](http://example.com)"}},
		{group: "audit", name: "audit: the warmup range never closed before the capture ended (its end NULL; once its copies held 0.0% of a region left out, in silence)", cmd: "audit",
			make: pipelineEdit(`UPDATE NVTX_EVENTS SET end = NULL WHERE text = 'warmup'`),
			exit: 1, want: []string{"assumed open-range: 1 instance of NVTX range warmup (pid 22) never closed before the capture ended: left out of the regions",
				"stream 13 [warmup]: 8 copies, 536.9 MB, held the host 79.3 ms (4.8% of the whole capture)"},
			never: []string{"(0.0% of its region)"}},
		{group: "audit", name: "audit BEFORE AFTER: AFTER without its pass ranges", cmd: "audit",
			make: pipelinePair(`DELETE FROM NVTX_EVENTS WHERE text = 'pass'`),
			exit: 1, want: []string{"UNAVAILABLE", "the capture after has no region pass, which the check judges"}},
		{group: "audit", name: "audit: the warmup range renamed (capture), as the whole capture's region is named (once two regions of one name, the range's taken for the capture's)", cmd: "audit",
			make: pipelineEdit(`UPDATE NVTX_EVENTS SET text = '(capture)' WHERE text = 'warmup'`),
			exit: 1, want: []string{"(capture)  1  median  1654", "(capture) (NVTX range)  1  median  274.9", "(capture) (NVTX range): 274.9 ms now (its one instance)"}},
		{group: "audit", name: "audit BEFORE AFTER: AFTER's every pass range twice, same times (once held against the 5 passes before)", cmd: "audit",
			make: pipelinePair(`INSERT INTO NVTX_EVENTS(start, end, eventType, text, globalTid) SELECT start, end, eventType, text, globalTid FROM NVTX_EVENTS WHERE text = 'pass'`),
			exit: 1, want: []string{"UNAVAILABLE", "unavailable: pass ran 5 times before and 10 after, so its ranges after are not the ones predicted"}},
		{group: "audit", name: "audit BEFORE AFTER: AFTER's pass ranges each cut in two halves (once judged as the same region: died, faster than predicted)", cmd: "audit",
			make: pipelinePair(`INSERT INTO NVTX_EVENTS(start, end, eventType, text, globalTid) SELECT start + (end - start) / 2, end, eventType, text, globalTid FROM NVTX_EVENTS WHERE text = 'pass'`,
				`UPDATE NVTX_EVENTS SET end = start + (end - start) / 2 - 1 WHERE text = 'pass' AND rowid <= 6`),
			exit: 1, want: []string{"UNAVAILABLE", "pass: unavailable: 5 instances before and 10 after"}},
		{group: "audit", name: "audit: every cudaEventSynchronize's event id made 999, its eventSyncId (the recording of the event it waited for) kept", cmd: "audit",
			make: pipelineEdit(`UPDATE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SET eventId = 999 WHERE syncType = 1`),
			exit: 2, want: []string{"pipeline-pageable.sqlite", "the cudaEventSynchronize of process 22 (correlation id 134) waits on event 999 by eventSyncId 2, the id of a recording of event 4 (correlation id 133), not of event 999"}},
		{group: "audit", name: "audit: every cudaEventSynchronize waits on event 999, never recorded (the replay's assumption once said in JSON alone)", cmd: "audit",
			make: pipelineEdit(`UPDATE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SET eventId = 999, eventSyncId = NULL WHERE syncType = 1`),
			exit: 1, want: []string{"unresolved: 7 waits on an event no recording of which is in the trace before it (cudaEventSynchronize, pid 22, event 999, the first: correlation id 134): each keeps its measured time and waits for no GPU work"}},
		{group: "audit", name: "audit: every CUDA_EVENT row's correlation id naming no call", cmd: "audit",
			make: pipelineEdit(`UPDATE CUPTI_ACTIVITY_KIND_CUDA_EVENT SET correlationId = correlationId + 100000`),
			exit: 1, want: []string{"unresolved: 6 event recordings without a recording call in the trace (pid 22, event 1, the first: correlation id 100218, stream 14)"}},
		{group: "audit", name: "audit: every synchronisation record's correlation id naming no call", cmd: "audit",
			make: pipelineEdit(`UPDATE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SET correlationId = correlationId + 100000`),
			exit: 1, want: []string{"unresolved: 7 event waits lacking the synchronisation record that names the event (cudaEventSynchronize, pid 22, the first: correlation id 134)"}},
		{group: records, name: "audit: every cudaEventSynchronize record ending 1 ns after it starts, before the kernel its event stood for", cmd: "audit",
			make: pipelineEdit(`UPDATE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SET end = start + 1 WHERE syncType = 1`),
			exit: 2, want: []string{"pipeline-pageable.sqlite", "table CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, stream 13 of process 22, device 0: the kernel started at 1115658088 ns ends at 1116289962 ns, 597584 ns after the event synchronisation (correlation id 134) that waited for it ended"}},
		{group: records, name: "audit: stream 14's kernels 40 times longer, past the cudaEventSynchronize that waited for them through stream 13's cudaStreamWaitEvent", cmd: "audit",
			make: pipelineEdit(`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start + (end - start) * 40 WHERE streamId = 14`),
			exit: 2, want: []string{"pipeline-pageable.sqlite", "table CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, stream 14 of process 22, device 0: the kernel started at 1384294973 ns ends at 1409549453 ns, 18237779 ns after the event synchronisation (correlation id 221) that waited for it ended"}},
		{group: records, name: "audit: the synchronisation records in reverse order, stream 14's kernels 40 times longer (the waits checked once all are read)", cmd: "audit",
			make: pipelineEdit(`CREATE TABLE s AS SELECT * FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION ORDER BY start DESC; DELETE FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
				INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SELECT * FROM s; DROP TABLE s; UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start + (end - start) * 40 WHERE streamId = 14`),
			exit: 2, want: []string{"pipeline-pageable.sqlite", "table CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, stream 14 of process 22, device 0: the kernel started at 2219260351 ns ends at 2244514871 ns, 17670364 ns after the event synchronisation (correlation id 473) that waited for it ended"}},
		{group: records, name: "audit: every synchronisation record on device 5, whose context TARGET_INFO_CUDA_CONTEXT_INFO does not list (once said in the JSON alone)", cmd: "audit",
			make: pipelineEdit(`UPDATE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SET deviceId = 5`),
			exit: 2, want: []string{"pipeline-pageable.sqlite", "table CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: 13 rows name context 1 on device 5 of process 22 (the pid in globalPid) on host hwId 0, vmId 1 (in globalPid) (the first: rowid 1), which TARGET_INFO_CUDA_CONTEXT_INFO does not list"}},
		{group: records, name: "audit: nsys's count of the CUDA events it collected overflowing 64 bits (once passed unread)", cmd: "audit",
			make: countEdit(counted + `'99999999999999999999999.'` + countRow),
			exit: 2, want: []string{"pipeline-pageable.sqlite", "table DIAGNOSTIC_EVENT, rowid 4: nsys's count of the CUDA events it collected is not a count"}},
		{group: records, name: "audit: nsys's count of the CUDA events written 7,22 (once read as 7)", cmd: "audit",
			make: countEdit(counted + `'7,22.'` + countRow),
			exit: 2, want: []string{"pipeline-pageable.sqlite", "table DIAGNOSTIC_EVENT, rowid 4: nsys's count of the CUDA events it collected is not a count"}},
		{group: records, name: "audit: a second count of the CUDA events nsys collected, 9000 beside 722 (once passed unread)", cmd: "audit",
			make: countEdit(`INSERT INTO DIAGNOSTIC_EVENT(timestamp, timestampType, source, severity, text, globalPid) SELECT timestamp + 1, timestampType, source, severity, 'Number of CUDA events collected: ' || char(9) || '9000.', globalPid FROM DIAGNOSTIC_EVENT` + countRow),
			exit: 2, want: []string{"pipeline-pageable.sqlite", "nsys counts the CUDA events it collected twice for one process, 722 and 9000, where it counts once"}},
		{group: records, name: "audit: every synchronisation record 200 ms before its call", cmd: "audit",
			make: pipelineEdit(`UPDATE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SET start = start - 200000000, end = end - 200000000`),
			exit: 2, want: []string{"pipeline-pageable.sqlite", "table CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, event synchronisation, correlation id 134 of process 22: the record runs [915692377, 916297686 ns], outside the cudaEventSynchronize call that made it [1115691441, 1116299467 ns]"}},
		{group: records, name: "audit: one kernel of stream 13 lengthened 50 ms, over the copies after it on its stream (once replayed, warmup's fit +18%)", cmd: "audit",
			make: pipelineEdit(`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = end + 50000000 WHERE rowid = (SELECT rowid FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE streamId = 13 ORDER BY start LIMIT 1 OFFSET 5)`),
			exit: 2, want: []string{"pipeline-pageable.sqlite", "table CUPTI_ACTIVITY_KIND_MEMCPY, stream 13 of process 22, device 0: a copy [1263386744, 1269545777 ns] and a kernel [1262752598, 1313383992 ns] overlap in time"}},
		{group: records, name: "audit: every event recording twice", cmd: "audit",
			make: pipelineEdit(`INSERT INTO CUPTI_ACTIVITY_KIND_CUDA_EVENT SELECT * FROM CUPTI_ACTIVITY_KIND_CUDA_EVENT`),
			exit: 2, want: []string{"pipeline-pageable.sqlite", "table CUPTI_ACTIVITY_KIND_CUDA_EVENT, recording of event 1, correlation id 218 of process 22: a second recording by the call with this correlation id"}},
		{group: records, name: "audit graph-whole: every graph launch traced twice", cmd: "audit",
			make: shippedEdit("graph-whole/graph-whole.sqlite", `INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE SELECT * FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE`),
			exit: 2, want: []string{"graph-whole.sqlite", "table CUPTI_ACTIVITY_KIND_GRAPH_TRACE, graph launch, correlation id 137 of process 22: a second record of the graph launch call"}},
		{group: records, name: "audit graph-whole: graph launches 1000 times longer, past the cudaStreamSynchronize that waited for them", cmd: "audit",
			make: shippedEdit("graph-whole/graph-whole.sqlite", `UPDATE CUPTI_ACTIVITY_KIND_GRAPH_TRACE SET end = start + (end - start) * 1000`),
			exit: 2, want: []string{"graph-whole.sqlite", "table CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, stream 13 of process 22, device 0: the graph launch started at 587727756 ns ends at 771952756 ns, 184035604 ns after the stream synchronisation (correlation id 138) that waited for it ended"}},
		{group: records, name: "audit graph-whole: graph launches on stream 777, which TARGET_INFO_CUDA_STREAM does not list", cmd: "audit",
			make: shippedEdit("graph-whole/graph-whole.sqlite", `UPDATE CUPTI_ACTIVITY_KIND_GRAPH_TRACE SET streamId = 777`),
			exit: 2, want: []string{"graph-whole.sqlite", "table CUPTI_ACTIVITY_KIND_GRAPH_TRACE: 30 rows name stream 777 (the first: rowid 1), which TARGET_INFO_CUDA_STREAM does not list"}},
		{group: records, name: "audit: syncType 9 on every synchronisation record, an id ENUM_CUPTI_SYNC_TYPE does not define (once read past: the call named the kind)", cmd: "audit",
			make: pipelineEdit(`UPDATE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SET syncType = 9`),
			exit: 2, want: []string{"pipeline-pageable.sqlite", "table CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, the synchronisation of correlation id 134: syncType 9 is not one of the ids ENUM_CUPTI_SYNC_TYPE defines"}},
		{group: records, name: "audit: nsys's messages at severity 9, a level ENUM_DIAGNOSTIC_SEVERITY_LEVEL does not define (an error at it once passed unread)", cmd: "audit",
			make: pipelineEdit(`UPDATE DIAGNOSTIC_EVENT SET severity = 9`),
			exit: 2, want: []string{"pipeline-pageable.sqlite", "table DIAGNOSTIC_EVENT, the message at 0 ns: severity 9 is not one of the ids ENUM_DIAGNOSTIC_SEVERITY_LEVEL defines"}},
		{group: records, name: "audit managed: migrationCause 77 on every migration, an id ENUM_CUDA_UNIF_MEM_MIGRATION does not define (once passed as a pass)", cmd: "audit",
			make: shippedEdit("managed/managed.sqlite", `UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET migrationCause = 77 WHERE migrationCause IS NOT NULL`),
			exit: 2, want: []string{"managed.sqlite", "migrationCause 77 is not one of the ids ENUM_CUDA_UNIF_MEM_MIGRATION defines"}},
		{group: expects, name: "audit --expect with a second JSON object after the first", cmd: "audit",
			make: pipelineExpect(`{"copies": 192} {"copies": 5}`),
			exit: 2, want: []string{"expect.json", "more than one JSON value in the file"}},
		{group: expects, name: "verify --expect with text after the object",
			make: func(t *testing.T, dir string) []string {
				e := filepath.Join(dir, "expect.json")
				writeFile(t, e, []byte(`{"claims": {"1.floor": "held"}} {"claims": {"1.floor": "died"}}`))
				return []string{copyShipped(t, dir, "pinned.sqlite"), "--expect", e}
			},
			exit: 2, want: []string{"expect.json", "more than one JSON value in the file"}},
		{group: expects, name: "audit --expect with a region measure that is none (fortnight)", cmd: "audit",
			make: pipelineExpect(`{"regions": {"pass": {"measure": "fortnight"}}}`),
			exit: 2, want: []string{"expect.json", `regions.pass.measure: "fortnight" is none of median, span`}},
		{group: expects, name: "audit --expect with a region of -5 instances", cmd: "audit",
			make: pipelineExpect(`{"regions": {"pass": {"instances": -5}}}`),
			exit: 2, want: []string{"expect.json", "regions.pass.instances: -5 is no count"}},
		{group: expects, name: "audit --expect with copies given twice, once as Copies (once read as the last)", cmd: "audit",
			make: pipelineExpect(`{"copies": 192, "Copies": 5}`),
			exit: 2, want: []string{"expect.json", `Copies: keys are matched in their case; write "copies"`}},
		{group: expects, name: "verify of a measurements file whose gpu key is written GPU",
			make: func(t *testing.T, dir string) []string {
				p := filepath.Join(dir, "pinned.results.json")
				b := readFile(t, "../../testdata/captures/h200-pinned/pinned.results.json")
				writeFile(t, p, []byte(strings.Replace(string(b), `"gpu"`, `"GPU"`, 1)))
				return []string{p}
			},
			exit: 2, want: []string{"pinned.results.json", `GPU: keys are matched in their case, and this one is not "gpu"`}},
		{group: expects, name: "audit --expect with a framework that is none (pytorchh)", cmd: "audit",
			make: pipelineExpect(`{"framework": "pytorchh"}`),
			exit: 2, want: []string{"expect.json", `framework: "pytorchh" is none of jax, pytorch, cupy, cuda-driver, cuda-runtime, unknown`}},
	}
}

// maskedReport is report of an audit JSON edited to hold an AWS key in its
// GPU's names: neither the Markdown nor the HTML it writes holds the key.
func maskedReport() badCase {
	var out string
	return badCase{group: "JSON nested without end, and audits edited", name: "report of an audit JSON holding an AWS key in the GPU's name (the HTML once showed it)", cmd: "report",
		make: func(t *testing.T, dir string) []string {
			args := editedAudit(func(results []map[string]any, check map[string]any) {
				for _, r := range results {
					r["gpu"] = "NVIDIA H200 " + awsKey
				}
			})(t, dir)
			out = args[2]
			return args
		},
		exit: 0, want: []string{"audit.json", "audit.html"}, never: []string{awsKey},
		check: func(t *testing.T, dir string) {
			for _, name := range []string{"audit.html", "audit.md"} {
				b := readFile(t, filepath.Join(out, name))
				if strings.Contains(string(b), awsKey) || !strings.Contains(string(b), "NVIDIA H200 AKIA") {
					t.Errorf("%s holds the planted key, or no GPU name", name)
				}
			}
		}}
}
