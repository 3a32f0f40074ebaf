package nsyssqlite

import (
	"context"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/fixture"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/internal/sqlitefile"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/source"
)

const trainPinned = "../testdata/captures/train-pinned/train-pinned.sqlite"

// open opens an export's committed state for a test.
func open(t *testing.T, path string) *sqlitefile.DB {
	t.Helper()
	f, err := source.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f.DB
}

// TestSyncsByTheirCalls reads the PyTorch capture's synchronisations: each
// is tied to its call by correlation id and takes its kind from that call,
// whatever syncType says (2, which ENUM_CUPTI_SYNC_TYPE names a stream
// wait, on every cudaStreamSynchronize row).
func TestSyncsByTheirCalls(t *testing.T) {
	calls := map[int64]string{}
	kinds := map[records.SyncKind]int{}
	var syncs []records.Sync
	h := records.Handler{
		Call: func(c *records.Call) error { calls[c.Corr] = c.Name; return nil },
		Sync: func(s *records.Sync) error { syncs = append(syncs, *s); kinds[s.Kind]++; return nil },
	}
	if _, err := Read(context.Background(), open(t, trainPinned), trainPinned, records.Selection{}, h); err != nil {
		t.Fatal(err)
	}
	if len(syncs) != 205 || kinds[records.SyncEvent] != 132 || kinds[records.SyncStream] != 73 {
		t.Fatalf("%d syncs by kind %v, want 205: 132 event syncs (cudaEventQuery), 73 stream syncs", len(syncs), kinds)
	}
	for _, s := range syncs {
		name := calls[s.Corr]
		want, ok := nsysdb.SyncKindOfCall(name)
		if !ok || s.Kind != want || s.PID != 22 {
			t.Fatalf("sync %+v: its call is %q", s, name)
		}
		switch s.Kind {
		case records.SyncStream:
			if s.Stream != 7 || s.Event != records.NoID {
				t.Errorf("stream sync %+v: want stream 7 and no event", s)
			}
		case records.SyncEvent:
			if s.Stream != records.NoID || s.Event < 0 {
				t.Errorf("event sync %+v: want an event and no stream", s)
			}
		}
	}
}

// TestSyncKindWithoutItsCall: a synchronisation whose call is not in the
// trace is told by the column, as nsys 2025.3 writes it.
func TestSyncKindWithoutItsCall(t *testing.T) {
	p := fixture.SQLite(t, trainPinned, `UPDATE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SET correlationId = correlationId + 1000000`)
	kinds := map[records.SyncKind]int{}
	h := records.Handler{Sync: func(s *records.Sync) error { kinds[s.Kind]++; return nil }}
	if _, err := Read(context.Background(), open(t, p), p, records.Selection{}, h); err != nil {
		t.Fatal(err)
	}
	if kinds[records.SyncEvent] != 132 || kinds[records.SyncStream] != 73 {
		t.Errorf("kinds %v", kinds)
	}
}

// TestEventsMetaDiagsCounts: the event records, what nsys traced and the
// trace's duration, nsys's diagnostics and the counts of the PyTorch
// capture.
func TestEventsMetaDiagsCounts(t *testing.T) {
	var meta records.Meta
	var events []records.EventRecord
	var diags []records.NsysDiag
	var counts records.Counts
	h := records.Handler{
		Meta:   func(m *records.Meta) error { meta = *m; return nil },
		Event:  func(e *records.EventRecord) error { events = append(events, *e); return nil },
		Diag:   func(d *records.NsysDiag) error { diags = append(diags, *d); return nil },
		Counts: func(c *records.Counts) error { counts = *c; return nil },
	}
	if _, err := Read(context.Background(), open(t, trainPinned), trainPinned, records.Selection{}, h); err != nil {
		t.Fatal(err)
	}
	tr := meta.Tracing
	if !tr.Known || !tr.CUDA || !tr.NVTX || tr.OSRT || tr.GraphTrace != "graph" || meta.DurationNs != 6528756924 || meta.GPU != "NVIDIA H200" {
		t.Errorf("meta %+v", meta)
	}
	if len(events) != 134 || events[0].Stream != 7 || events[0].PID != 22 || events[0].Event < 0 || events[0].Seq == 0 {
		t.Errorf("%d events, first %+v", len(events), events)
	}
	if len(diags) != 12 || diags[0].Severity != records.SeverityInfo || diags[0].Text != "Profiling has started." || diags[0].Source != "Analysis" {
		t.Errorf("%d diagnostics, first %+v", len(diags), diags[0])
	}
	// The export records its duration, so the first and last call are not
	// looked for.
	if counts != (records.Counts{Calls: 8423, Memsets: 272}) {
		t.Errorf("counts %+v", counts)
	}
	p := fixture.SQLite(t, trainPinned, `DROP TABLE ANALYSIS_DETAILS`)
	h = records.Handler{Counts: func(c *records.Counts) error { counts = *c; return nil }}
	if _, err := Read(context.Background(), open(t, p), p, records.Selection{}, h); err != nil {
		t.Fatal(err)
	}
	if counts != (records.Counts{Calls: 8423, FirstCall: 2864690694, LastCall: 5959457476, Memsets: 272}) {
		t.Errorf("without the duration: counts %+v", counts)
	}
}

// TestGraphLaunches: the launches of CUDA_ACTIVITY_KIND_GRAPH_TRACE, where
// an export has it (none of the shipped ones: they trace graph nodes).
func TestGraphLaunches(t *testing.T) {
	p := fixture.SQLite(t, trainPinned,
		`CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
			contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, graphId INTEGER)`,
		`INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (100, 250, 0, 1, NULL, 13, 4242, 281475345809408, 3)`)
	var gs []records.GraphLaunch
	h := records.Handler{Graph: func(g *records.GraphLaunch) error { gs = append(gs, *g); return nil }}
	if _, err := Read(context.Background(), open(t, p), p, records.Selection{}, h); err != nil {
		t.Fatal(err)
	}
	want := records.GraphLaunch{Start: 100, End: 250, Corr: 4242, PID: 22, Device: 0, Stream: 13, Graph: 3}
	if len(gs) != 1 || gs[0] != want {
		t.Errorf("graphs %+v, want %+v", gs, want)
	}
}

// TestOnlyWantedKinds: a kind nobody wants is not read and its absence not
// reported; the tables absent for a wanted kind are.
func TestOnlyWantedKinds(t *testing.T) {
	p := fixture.SQLite(t, trainPinned, `DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL`, `DROP TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION`)
	gaps := func(h records.Handler, opts records.Selection) map[records.Fact]bool {
		got := map[records.Fact]bool{}
		h.Gap = func(g records.Gap) error { got[g.Fact] = true; return nil }
		if _, err := Read(context.Background(), open(t, p), p, opts, h); err != nil {
			t.Fatal(err)
		}
		return got
	}
	ops := 0
	copies := gaps(records.Handler{Op: func(o *records.Op) error {
		if o.Kind != records.OpCopy {
			t.Errorf("an operation of a kind not asked for: %+v", o)
		}
		ops++
		return nil
	}}, records.Selection{Ops: []records.OpKind{records.OpCopy}})
	if copies[records.FactKernels] || copies[records.FactSync] || ops != 207 {
		t.Errorf("copies only: gaps %v, %d copies", copies, ops)
	}
	all := gaps(records.Handler{Op: func(*records.Op) error { return nil }, Sync: func(*records.Sync) error { return nil }}, records.Selection{})
	if !all[records.FactKernels] || !all[records.FactSync] {
		t.Errorf("every kind: gaps %v", all)
	}
}

// TestInterrupted: a cancelled context stops the read with an error that
// says so.
func TestInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Read(ctx, open(t, trainPinned), trainPinned, records.Selection{}, records.Handler{Call: func(*records.Call) error { return nil }})
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("err = %v", err)
	}
}

// TestCallsAheadTellsTheThreadsCalls reads the program's thread of a
// capture: the reader tells, once and before the first call, how many calls
// it counted for the thread, the number it then hands on; reading every
// thread it counts none and tells nothing.
func TestCallsAheadTellsTheThreadsCalls(t *testing.T) {
	for _, thread := range []bool{true, false} {
		told, calls, toldAt := []int{}, 0, -1
		h := records.Handler{
			CallsAhead: func(n int) error { told, toldAt = append(told, n), calls; return nil },
			Call:       func(*records.Call) error { calls++; return nil },
		}
		sel := records.Selection{ProgramThread: thread, APINames: []string{"cudaMemcpy", "cudaMemcpyAsync", "cudaStreamSynchronize", "cudaLaunchKernel"}}
		if _, err := Read(context.Background(), open(t, trainPinned), trainPinned, sel, h); err != nil {
			t.Fatal(err)
		}
		switch {
		case calls == 0:
			t.Fatalf("ProgramThread %v: no calls read", thread)
		case thread && (len(told) != 1 || told[0] != calls || toldAt != 0):
			t.Errorf("ProgramThread: told %v (after %d calls), then %d calls handed on; want %d told once, first", told, toldAt, calls, calls)
		case !thread && len(told) != 0:
			t.Errorf("every thread: told %v, want nothing", told)
		}
	}
}

// TestStreamKinds: the streams TARGET_INFO_CUDA_STREAM lists, with how each
// was made; a flag CUPTI does not define is refused, naming its row.
func TestStreamKinds(t *testing.T) {
	const otherCounts = "../testdata/captures/other-counts/other-counts.sqlite"
	var got []records.Stream
	h := records.Handler{Stream: func(s *records.Stream) error { got = append(got, *s); return nil }}
	if _, err := Read(context.Background(), open(t, otherCounts), otherCounts, records.Selection{}, h); err != nil {
		t.Fatal(err)
	}
	kinds := map[int64]records.StreamKind{}
	for _, s := range got {
		if s.PID != 22 || s.Context != 1 {
			t.Errorf("stream %+v: want pid 22, context 1", s)
		}
		kinds[s.ID] = s.Kind
	}
	want := map[int64]records.StreamKind{6: records.StreamBlocking, 7: records.StreamNull, 8: records.StreamNonBlocking,
		9: records.StreamNonBlocking, 10: records.StreamNonBlocking, 11: records.StreamNonBlocking, 12: records.StreamBlocking,
		13: records.StreamBlocking, 14: records.StreamNonBlocking}
	if len(got) != len(want) || len(kinds) != len(want) {
		t.Fatalf("streams %+v, want %v", got, want)
	}
	for id, k := range want {
		if kinds[id] != k {
			t.Errorf("stream %d is %v, want %v", id, kinds[id], k)
		}
	}
	p := fixture.SQLite(t, otherCounts, `UPDATE TARGET_INFO_CUDA_STREAM SET flag = 9 WHERE streamId = 13`)
	_, err := Read(context.Background(), open(t, p), p, records.Selection{}, h)
	if err == nil || !strings.Contains(err.Error(), "table TARGET_INFO_CUDA_STREAM, rowid 1") || !strings.Contains(err.Error(), "stream 13 has flag 9") {
		t.Errorf("a stream of flag 9: %v, want it refused naming its row", err)
	}
}
