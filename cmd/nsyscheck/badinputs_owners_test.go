package main

// ownerCases: records that the capture's own lists and orders contradict
// (a stream listed for another process or context than its work's, or
// twice; an op running while the op the legacy default stream, or a
// cudaStreamWaitEvent, makes it wait for still ran). Each is made from a shipped capture, damaged the way the row
// says; verify and audit answer alike.
func ownerCases() []badCase {
	const group = "lists and orders the records contradict"
	return []badCase{
		{group: group, name: "SQLite: TARGET_INFO_CUDA_STREAM lists the copies' stream 7 for process 23, its copies of process 22 (once read as the program's stream)",
			make: sqliteEdit(`UPDATE TARGET_INFO_CUDA_STREAM SET processId = 23 WHERE streamId = 7`),
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_MEMCPY: 283 rows put work on stream 7 of context 1 of process 22", "where TARGET_INFO_CUDA_STREAM lists stream 7 of context 1 of process 23", "(rowid 6)"},
			notHeld: []string{"2", "4"}},
		{group: group, name: "audit: TARGET_INFO_CUDA_STREAM lists blocking stream 13 in context 2, its work in context 1", cmd: "audit",
			make: nullstreamEdit(`UPDATE TARGET_INFO_CUDA_STREAM SET contextId = 2 WHERE streamId = 13`),
			exit: 2, want: []string{"nullstream-pageable.sqlite", "put work on stream 13 of context 1 of process 22", "lists stream 13 of context 2 of process 22", "(rowid 1)"}},
		{group: group, name: "audit: TARGET_INFO_CUDA_STREAM listing blocking stream 13 again as non-blocking (once its kind read as unknown, the audit going on)", cmd: "audit",
			make: nullstreamEdit(`INSERT INTO TARGET_INFO_CUDA_STREAM SELECT streamId, hwId, vmId, processId, contextId, priority, 2 FROM TARGET_INFO_CUDA_STREAM WHERE streamId = 13`),
			exit: 2, want: []string{"nullstream-pageable.sqlite: table TARGET_INFO_CUDA_STREAM, rowids 1 and 11", "stream 13 of process 22 is listed twice (rowid 1: context 1, blocking; rowid 11: context 1, non-blocking)"}},
		{group: group, name: "SQLite: TARGET_INFO_CUDA_STREAM listing the NULL stream 7 twice, alike",
			make: sqliteEdit(`INSERT INTO TARGET_INFO_CUDA_STREAM SELECT * FROM TARGET_INFO_CUDA_STREAM WHERE streamId = 7`),
			exit: 2, want: []string{"pinned.sqlite: table TARGET_INFO_CUDA_STREAM, rowids 6 and 9", "stream 7 of process 22 is listed twice"},
			notHeld: []string{"1", "2", "3", "4"}},
		{group: group, name: "audit: TARGET_INFO_CUDA_CONTEXT_INFO listing context 1 again on device 1 (once read past)", cmd: "audit",
			make: pipelineEdit(`INSERT INTO TARGET_INFO_CUDA_CONTEXT_INFO SELECT nullStreamId, hwId, vmId, processId, deviceId + 1, contextId, parentContextId, isGreenContext FROM TARGET_INFO_CUDA_CONTEXT_INFO`),
			exit: 2, want: []string{"pipeline-pageable.sqlite: table TARGET_INFO_CUDA_CONTEXT_INFO, rowids 1 and 2", "context 1 of process 22 is listed twice (on device 0, and on device 1)"}},
		{group: group, name: "audit: a kernel on the legacy default stream moved to start before the blocking stream's kernel it waits for ended (once replayed on)", cmd: "audit",
			make: nullstreamEdit(`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = (SELECT k.end - 50000 FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE k.rowid = 1) WHERE rowid = 2`),
			exit: 2, want: []string{"nullstream-pageable.sqlite", "on legacy default (NULL) stream 7 of process 22", "started before the kernel spin", "correlation id 129) on blocking stream 13", "the ops' times contradict the order the streams' kinds imply"}},
		{group: group, name: "audit: the copy an event recorded on stream 14 made to end after the copy a cudaStreamWaitEvent makes wait for it started (once a PASS)", cmd: "audit",
			make: shippedEdit("pipeline-pinned/pipeline-pinned.sqlite", `UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET end = (SELECT m.start + 20000 FROM CUPTI_ACTIVITY_KIND_MEMCPY m WHERE m.correlationId = 223) WHERE correlationId = 218`),
			exit: 2, want: []string{"pipeline-pinned.sqlite", "the copy (correlation id 223) on non-blocking stream 13", "started before the copy (correlation id 218) on non-blocking stream 14",
				"where the cudaStreamWaitEvent of correlation id 220 makes it wait for that op"}},
	}
}
