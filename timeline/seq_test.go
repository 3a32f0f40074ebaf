package timeline_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/timeline"
	"github.com/nsyscheck/nsyscheck/timeline/timelinetest"
)

// seqCapture records event 5 twice on stream 7, after kernels k1 and k2
// (eventSyncIds 11 and 12), then synchronises on it by wait; seq is the
// eventSyncId the synchronisation names.
func seqCapture(seq int64) (c *timelinetest.Capture, k1, k2, wait int64) {
	c = &timelinetest.Capture{}
	k1 = c.Launch(1, 0, 10, 7, 20, 500)
	r1 := c.Call(1, "cudaEventRecord", 20, 25)
	c.Record(r1, 7, 5)
	c.Events[len(c.Events)-1].Seq = 11
	k2 = c.Launch(1, 30, 40, 7, 500, 900)
	r2 := c.Call(1, "cudaEventRecord", 50, 55)
	c.Record(r2, 7, 5)
	c.Events[len(c.Events)-1].Seq = 12
	wait = c.Call(1, "cudaEventSynchronize", 60, 600)
	c.Sync(records.SyncEvent, wait, records.NoID, 5, 60, 600)
	c.Syncs[len(c.Syncs)-1].Seq = seq
	return c, k1, k2, wait
}

// A wait that names its recording by eventSyncId waits for that
// recording's work, even where a later one was made before it; one that
// names a recording the trace lacks takes the last one before it and
// says so; one that names none takes the last one, as before.
func TestEventWaitsByRecordingID(t *testing.T) {
	for _, tc := range []struct {
		name      string
		seq       int64
		on        func(k1, k2 int64) int64
		unmatched bool
	}{
		{"names the first recording", 11, func(k1, _ int64) int64 { return k1 }, false},
		{"names the last recording", 12, func(_, k2 int64) int64 { return k2 }, false},
		{"names none", 0, func(_, k2 int64) int64 { return k2 }, false},
		{"names one the trace lacks", 99, func(_, k2 int64) int64 { return k2 }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, k1, k2, wait := seqCapture(tc.seq)
			tl := build(t, c, timeline.Options{})
			w := waitOf(tl, callOf(t, tl, wait))
			if want := opOf(t, tl, tc.on(k1, k2)); w == nil || w.Kind != timeline.WaitEvent || !slices.Equal(w.On, []int32{want}) {
				t.Fatalf("wait = %+v, want an event wait on op %d", w, want)
			}
			unmatched := timeline.Assumption{Kind: timeline.AssumeEventRecordingUnmatched, PID: timelinetest.PID, API: "cudaEventSynchronize",
				Event: 5, Stream: -1, Count: 1, Corr: wait}
			if got := slices.Contains(tl.Assumptions, unmatched); got != tc.unmatched {
				t.Errorf("assumption %+v among %+v: %v, want %v", unmatched, tl.Assumptions, got, tc.unmatched)
			}
		})
	}
}

// eventSyncIds that contradict the trace are refused, each naming the
// record and why.
func TestEventRecordingIDsThatContradict(t *testing.T) {
	other := func() *timelinetest.Capture {
		c, _, _, _ := seqCapture(21)
		c.Launch(1, 61, 62, 8, 610, 700)
		r := c.Call(1, "cudaEventRecord", 1000, 1005)
		c.Record(r, 8, 6)
		c.Events[len(c.Events)-1].Seq = 21
		return c
	}
	later := func() *timelinetest.Capture {
		c, _, _, _ := seqCapture(13)
		r := c.Call(1, "cudaEventRecord", 700, 705)
		c.Record(r, 7, 5)
		c.Events[len(c.Events)-1].Seq = 13
		return c
	}
	twice := func() *timelinetest.Capture {
		c, _, _, _ := seqCapture(12)
		c.Events[0].Seq = 12
		return c
	}
	for _, tc := range []struct {
		name string
		c    *timelinetest.Capture
		want string
	}{
		{"a recording of another event", other(), "waits on event 5 by eventSyncId 21, the id of a recording of event 6"},
		{"a recording made after the wait returned", later(), "waits on event 5 by eventSyncId 13, a recording made by correlation id"},
		{"two recordings with one id", twice(), "has eventSyncId 12, and so does the recording of event 5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.c.Build(context.Background(), timeline.Options{})
			var le *timeline.EventLinkError
			if !errors.As(err, &le) {
				t.Fatalf("err = %v, want an EventLinkError", err)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "export the report again") {
				t.Errorf("err = %q, want it to hold %q and what to do", err, tc.want)
			}
		})
	}
}

// A synchronisation record written twice, under two correlation ids, is
// refused: nsys writes one record a wait.
func TestSyncRecordTwiceIsRefused(t *testing.T) {
	c, _, _, wait := seqCapture(12)
	again := c.Syncs[len(c.Syncs)-1]
	again.Corr = wait + 1000
	c.Syncs = append(c.Syncs, again)
	_, err := c.Build(context.Background(), timeline.Options{})
	var de *timeline.DuplicateSyncError
	if !errors.As(err, &de) || de.FirstCorr != wait || de.Sync.Corr != wait+1000 {
		t.Fatalf("err = %v, want a DuplicateSyncError of correlation ids %d and %d", err, wait, wait+1000)
	}
}
