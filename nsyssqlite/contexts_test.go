package nsyssqlite

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/fixture"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/records"
)

// Work on a context, device or process the export's lists do not hold is
// refused like an unlisted stream: the table, how many rows, the first
// and what to do. The shipped export reads.
func TestUnlistedContexts(t *testing.T) {
	h := records.Handler{Call: func(*records.Call) error { return nil }, Op: func(*records.Op) error { return nil },
		Sync: func(*records.Sync) error { return nil }, Meta: func(*records.Meta) error { return nil }}
	read := func(p string) error {
		_, err := Read(context.Background(), open(t, p), p, records.Selection{}, h)
		return err
	}
	if err := read(trainPinned); err != nil {
		t.Fatalf("the shipped export: %v", err)
	}
	cases := []struct {
		name  string
		stmts []string
		where string
		want  string
	}{
		{"every context listed for another process", []string{`UPDATE TARGET_INFO_CUDA_CONTEXT_INFO SET processId = 99`}, "table CUPTI_ACTIVITY_KIND_MEMCPY",
			"207 rows name context 1 on device 0 of process 22 (the pid in globalPid) on host hwId 0, vmId 1 (in globalPid) (the first: rowid 1), which TARGET_INFO_CUDA_CONTEXT_INFO does not list among the program's contexts"},
		{"the kernels on device 5", []string{`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = 5`}, "table CUPTI_ACTIVITY_KIND_KERNEL",
			"rows name context 1 on device 5 of process 22 (the pid in globalPid) on host hwId 0, vmId 1 (in globalPid) (the first: rowid 1), which TARGET_INFO_CUDA_CONTEXT_INFO does not list"},
		{"the copies on device 5, no context list", []string{`UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET deviceId = 5`, `DROP TABLE TARGET_INFO_CUDA_CONTEXT_INFO`}, "table CUPTI_ACTIVITY_KIND_MEMCPY",
			"207 rows name device 5 (the first: rowid 1), which TARGET_INFO_GPU does not list among the capture's GPUs"},
		{"every context listed on another host", []string{`UPDATE TARGET_INFO_CUDA_CONTEXT_INFO SET hwId = 3, vmId = 4`}, "table CUPTI_ACTIVITY_KIND_MEMCPY",
			"207 rows name context 1 on device 0 of process 22 (the pid in globalPid) on host hwId 0, vmId 1 (in globalPid) (the first: rowid 1), which TARGET_INFO_CUDA_CONTEXT_INFO does not list"},
		{"one kernel of the same pid on another host", []string{`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET globalPid = globalPid + (1 << 56) WHERE rowid = 2`}, "table CUPTI_ACTIVITY_KIND_KERNEL",
			"1 row name context 1 on device 0 of process 22 (the pid in globalPid) on host hwId 1, vmId 1 (in globalPid) (the first: rowid 2)"},
		{"one memset of another process", []string{`UPDATE CUPTI_ACTIVITY_KIND_MEMSET SET globalPid = globalPid + (1 << 24) WHERE rowid = 3`}, "table CUPTI_ACTIVITY_KIND_MEMSET",
			"1 row name context 1 on device 0 of process 23 (the pid in globalPid) on host hwId 0, vmId 1 (in globalPid) (the first: rowid 3)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := read(fixture.SQLite(t, trainPinned, tc.stmts...))
			var ie *inputerr.Error
			if !errors.As(err, &ie) || ie.Where != tc.where || !strings.Contains(ie.Problem, tc.want) || !strings.Contains(ie.Hint, "export it again") {
				t.Errorf("got %v, want %s: %q", err, tc.where, tc.want)
			}
		})
	}
}

// A record past the trace's stop whose correlationId is NULL is named by
// its rowid, with the NULL said, not as correlation id 0.
func TestStopNamesNullCorrelation(t *testing.T) {
	p := fixture.SQLite(t, trainPinned, append(nullable("CUPTI_ACTIVITY_KIND_MEMCPY"),
		`UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET correlationId = NULL, end = end + 9000000000000 WHERE rowid = 207`)...)
	_, err := Read(context.Background(), open(t, p), p, records.Selection{}, records.Handler{Op: func(*records.Op) error { return nil }})
	var ie *inputerr.Error
	if !errors.As(err, &ie) || ie.Where != "table CUPTI_ACTIVITY_KIND_MEMCPY, rowid 207 (correlationId NULL)" || !strings.Contains(ie.Problem, "after the trace stopped") {
		t.Errorf("got %v", err)
	}
}

// A NULL globalPid on a synchronisation, event recording, kernel or
// memset, which would make it a record of no process (its waits and
// streams then of no one), is refused with the table, column and first
// row named.
func TestNullProcess(t *testing.T) {
	h := records.Handler{Op: func(*records.Op) error { return nil }, Sync: func(*records.Sync) error { return nil },
		Event: func(*records.EventRecord) error { return nil }}
	for table, want := range map[string]string{
		"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION": "column globalPid is NULL in 1 row (the first: rowid 4)",
		"CUPTI_ACTIVITY_KIND_CUDA_EVENT":      "column globalPid is NULL in 1 row (the first: rowid 4)",
		"CUPTI_ACTIVITY_KIND_KERNEL":          "column globalPid is NULL in 1 row (the first: rowid 4)",
		"CUPTI_ACTIVITY_KIND_MEMSET":          "column globalPid is NULL in 1 row (the first: rowid 4)",
	} {
		t.Run(table, func(t *testing.T) {
			p := fixture.SQLite(t, trainPinned, append(nullable(table), `UPDATE `+table+` SET globalPid = NULL WHERE rowid = 4`)...)
			_, err := Read(context.Background(), open(t, p), p, records.Selection{}, h)
			var ie *inputerr.Error
			if !errors.As(err, &ie) || ie.Where != "table "+table || !strings.Contains(ie.Problem, want) {
				t.Errorf("got %v, want table %s: %q", err, table, want)
			}
		})
	}
}

// Work on a stream the stream list (TARGET_INFO_CUDA_STREAM) holds for
// another process, context or host is refused, naming the table, the
// stream, the first record's row and the list's row, beside the stream
// (Read) and after it (StreamThenCheck) alike. A context the program
// never made is said as such first.
func TestStreamOfAnotherOwner(t *testing.T) {
	const pipeline = "../testdata/captures/nullstream-pinned/nullstream-pinned.sqlite"
	h := auditHandler()
	cases := []struct {
		name  string
		stmts []string
		where string
		want  string
	}{
		{"stream 13 listed for process 23", []string{`UPDATE TARGET_INFO_CUDA_STREAM SET processId = 23 WHERE streamId = 13`}, "table CUPTI_ACTIVITY_KIND_MEMCPY",
			"42 rows put work on stream 13 of context 1 of process 22 on host hwId 0, vmId 1 (the first: rowid 1), where TARGET_INFO_CUDA_STREAM lists stream 13 of context 1 of process 23 on host hwId 0, vmId 1 (rowid 1): the records and the list disagree on whose stream it is"},
		{"stream 7 listed in context 2", []string{`UPDATE TARGET_INFO_CUDA_STREAM SET contextId = 2 WHERE streamId = 7`}, "table CUPTI_ACTIVITY_KIND_KERNEL",
			"rows put work on stream 7 of context 1 of process 22 on host hwId 0, vmId 1 (the first: rowid 2), where TARGET_INFO_CUDA_STREAM lists stream 7 of context 2 of process 22 on host hwId 0, vmId 1 (rowid 8)"},
		{"stream 14 listed on another host", []string{`UPDATE TARGET_INFO_CUDA_STREAM SET hwId = 3 WHERE streamId = 14`}, "table CUPTI_ACTIVITY_KIND_MEMCPY",
			"where TARGET_INFO_CUDA_STREAM lists stream 14 of context 1 of process 22 on host hwId 3, vmId 1 (rowid 4)"},
		{"a kernel of a context never made", []string{`UPDATE TARGET_INFO_CUDA_STREAM SET processId = 23 WHERE streamId = 13`, `UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET contextId = 9 WHERE rowid = 3`},
			"table CUPTI_ACTIVITY_KIND_KERNEL", "1 row name context 9 on device 0 of process 22"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := fixture.SQLite(t, pipeline, tc.stmts...)
			_, beside := Read(context.Background(), open(t, p), p, records.Selection{JoinCalls: true}, h)
			_, after := streamThenCheck(t, p, h)
			for _, err := range []error{beside, after} {
				var ie *inputerr.Error
				if !errors.As(err, &ie) || ie.Path != p || ie.Where != tc.where || !strings.Contains(ie.Problem, tc.want) || !strings.Contains(ie.Hint, "export it again") {
					t.Errorf("got %v, want %s: %q", err, tc.where, tc.want)
				}
			}
		})
	}
	if _, err := streamThenCheck(t, pipeline, h); err != nil {
		t.Fatalf("the shipped export: %v", err)
	}
}

// A stream the stream list (TARGET_INFO_CUDA_STREAM) lists twice for one
// process, as another kind or alike, is refused naming both rows, beside
// the stream and after it: which kind orders its work is unclear (once
// read as of unknown kind, the audit going on). The same stream id in
// two processes is two streams.
func TestStreamListedTwice(t *testing.T) {
	const shipped = "../testdata/captures/nullstream-pinned/nullstream-pinned.sqlite"
	h := auditHandler()
	h.Stream = func(*records.Stream) error { return nil }
	for _, tc := range []struct {
		name, stmt, want string
	}{
		{"stream 13 again as non-blocking", `INSERT INTO TARGET_INFO_CUDA_STREAM SELECT streamId, hwId, vmId, processId, contextId, priority, 2 FROM TARGET_INFO_CUDA_STREAM WHERE streamId = 13`,
			"stream 13 of process 22 is listed twice (rowid 1: context 1, blocking; rowid 11: context 1, non-blocking), where nsys lists each stream once"},
		{"the NULL stream's row twice", `INSERT INTO TARGET_INFO_CUDA_STREAM SELECT * FROM TARGET_INFO_CUDA_STREAM WHERE streamId = 7`,
			"stream 7 of process 22 is listed twice (rowid 8: context 1, the NULL stream; rowid 11: context 1, the NULL stream)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := fixture.SQLite(t, shipped, tc.stmt)
			_, beside := Read(context.Background(), open(t, p), p, records.Selection{JoinCalls: true}, h)
			_, after := streamThenCheck(t, p, h)
			for _, err := range []error{beside, after} {
				var ie *inputerr.Error
				if !errors.As(err, &ie) || ie.Path != p || !strings.HasPrefix(ie.Where, "table TARGET_INFO_CUDA_STREAM, rowids ") || !strings.Contains(ie.Problem, tc.want) {
					t.Errorf("got %v, want %q", err, tc.want)
				}
			}
		})
	}
	p := fixture.SQLite(t, shipped, `INSERT INTO TARGET_INFO_CUDA_STREAM SELECT streamId, hwId, vmId, processId + 1, contextId, priority, flag FROM TARGET_INFO_CUDA_STREAM WHERE streamId = 13`)
	if _, err := streamThenCheck(t, p, h); err != nil {
		t.Errorf("stream 13 of another process too: %v", err)
	}
}

// A context the context list (TARGET_INFO_CUDA_CONTEXT_INFO) lists twice
// for one process, on another device or alike, is refused naming both
// rows, beside the stream and after it (once read past: the records'
// device matched one of the two).
func TestContextListedTwice(t *testing.T) {
	const shipped = "../testdata/captures/pipeline-pageable/pipeline-pageable.sqlite"
	h := auditHandler()
	p := fixture.SQLite(t, shipped, `INSERT INTO TARGET_INFO_CUDA_CONTEXT_INFO SELECT nullStreamId, hwId, vmId, processId, deviceId + 1, contextId, parentContextId, isGreenContext FROM TARGET_INFO_CUDA_CONTEXT_INFO`)
	_, beside := Read(context.Background(), open(t, p), p, records.Selection{JoinCalls: true}, h)
	_, after := streamThenCheck(t, p, h)
	for _, err := range []error{beside, after} {
		var ie *inputerr.Error
		if !errors.As(err, &ie) || ie.Path != p || ie.Where != "table TARGET_INFO_CUDA_CONTEXT_INFO, rowids 1 and 2" ||
			!strings.Contains(ie.Problem, "context 1 of process 22 is listed twice (on device 0, and on device 1)") {
			t.Errorf("got %v", err)
		}
	}
	if _, err := streamThenCheck(t, shipped, h); err != nil {
		t.Fatalf("the shipped export: %v", err)
	}
}
