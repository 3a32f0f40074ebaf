package capture

import (
	"context"
	"testing"

	"github.com/nsyscheck/nsyscheck/records"
)

// eventLoop feeds x a loop that records one event and waits for it, n
// times (a framework reusing its events: one JAX capture records each of
// its 8 events up to 106 times): the recording calls and the
// synchronising calls, then the recordings, then the synchronisations, in
// the SQLite reader's order. The late-th wait ends before the kernel its
// recording stands for (none where late is negative).
func eventLoop(x *crossCheck, n int, late int) {
	const step = 100_000
	for k := range n {
		t := int64(k * step)
		x.call(&records.Call{Name: "cudaEventRecord", Start: t, End: t + 10, Corr: int64(2*k + 1), PID: 1, TID: 1})
		x.call(&records.Call{Name: "cudaEventSynchronize", Start: t + 20, End: t + 50_000, Corr: int64(2*k + 2), PID: 1, TID: 1})
	}
	for k := range n {
		x.op(&records.Op{Kind: records.OpKernel, Start: int64(k*step) - 5000, End: int64(k*step) + 40_000, PID: 1, Device: 0, Stream: 7, Corr: 0})
	}
	for k := range n {
		x.event(&records.EventRecord{Corr: int64(2*k + 1), PID: 1, Device: 0, Stream: 7, Event: 3})
	}
	for k := range n {
		t := int64(k * step)
		end := t + 45_000
		if k == late {
			end = t + 300 // ends before the kernel it waited for
		}
		x.sync(&records.Sync{Kind: records.SyncEvent, Start: t + 25, End: end, Corr: int64(2*k + 2), PID: 1, Device: 0, Stream: records.NoID, Event: 3})
	}
}

// An event synchronisation is checked against the last recording of its
// event whose call began before the wait, among many recordings of one
// event: a wait that ends before that recording's work fails, naming it.
func TestEventSyncAgainstItsRecording(t *testing.T) {
	for _, late := range []int{-1, 0, 777, 1999} {
		x := newCrossCheck(context.Background(), FormatSQLite)
		eventLoop(x, 2000, late)
		_, err := x.finish()
		if late < 0 && err != nil {
			t.Errorf("every wait ends after its work: %v", err)
		}
		if late >= 0 && err == nil {
			t.Errorf("wait %d ends before the kernel its event's recording stands for: no error", late)
		}
	}
}

// BenchmarkEventSyncs: 20,000 waits on one event recorded 20,000 times.
func BenchmarkEventSyncs(b *testing.B) {
	for b.Loop() {
		x := newCrossCheck(context.Background(), FormatSQLite)
		eventLoop(x, 20000, -1)
		if _, err := x.finish(); err != nil {
			b.Fatal(err)
		}
	}
}
