package timeline_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/timeline"
	"github.com/nsyscheck/nsyscheck/timeline/timelinetest"
)

// nullCapture launches, in turn, a kernel on blocking stream 13, one on the
// NULL stream 7, one on non-blocking stream 14, one more on stream 13 and
// one more on stream 7, then synchronises stream 13; kinds says how the
// streams were made (none: the input does not say).
func nullCapture(kinds bool) (c *timelinetest.Capture, b1, n1, x1, b2, n2, sync int64) {
	c = &timelinetest.Capture{}
	b1 = c.Launch(1, 0, 10, 13, 20, 400)
	n1 = c.Launch(1, 20, 30, 7, 400, 500)
	x1 = c.Launch(1, 40, 50, 14, 60, 900)
	b2 = c.Launch(1, 60, 70, 13, 500, 600)
	n2 = c.Launch(1, 80, 90, 7, 600, 700)
	sync = c.Call(1, "cudaStreamSynchronize", 100, 710)
	c.Sync(records.SyncStream, sync, 13, records.NoID, 100, 710)
	if kinds {
		c.StreamOf(7, records.StreamNull)
		c.StreamOf(13, records.StreamBlocking)
		c.StreamOf(14, records.StreamNonBlocking)
	}
	return c, b1, n1, x1, b2, n2, sync
}

// The legacy default stream is ordered against the blocking streams of its
// context, both ways, and not against a non-blocking stream; a blocking
// stream's synchronisation waits for the NULL stream's work launched
// before it too.
func TestNullStreamOrder(t *testing.T) {
	c, b1, n1, _, b2, n2, sync := nullCapture(true)
	tl := build(t, c, timeline.Options{})
	on := func(corr int64) []int32 {
		var out []int32
		for _, w := range tl.StreamWaits {
			if w.Op == opOf(t, tl, corr) {
				if !w.Implicit {
					t.Errorf("stream wait %+v: want it marked implicit", w)
				}
				out = append(out, w.On)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		op   int64
		want []int64
	}{
		{"NULL after blocking", n1, []int64{b1}},
		{"blocking after NULL", b2, []int64{n1}},
		{"NULL after blocking again", n2, []int64{b2}},
		{"first on its stream", b1, nil},
	} {
		var want []int32
		for _, w := range tc.want {
			want = append(want, opOf(t, tl, w))
		}
		if got := on(tc.op); !slices.Equal(got, want) {
			t.Errorf("%s: op waits for %v, want %v", tc.name, got, want)
		}
	}
	if len(tl.StreamWaits) != 3 {
		t.Errorf("stream waits %+v: want 3, none on the non-blocking stream", tl.StreamWaits)
	}
	w := waitOf(tl, callOf(t, tl, sync))
	want := []int32{opOf(t, tl, b2), opOf(t, tl, n2)}
	if w == nil || w.Kind != timeline.WaitStream || !slices.Equal(w.On, want) {
		t.Errorf("stream 13's synchronisation waits %+v, want ops %v (its own last, the NULL stream's last)", w, want)
	}
	for _, a := range tl.Assumptions {
		if a.Kind == timeline.AssumeStreamKindsUnknown {
			t.Errorf("assumption %+v where every stream's kind is listed", a)
		}
	}
}

// Where the input does not say how the streams were made, they stay
// independent and the timeline says so, once per process, counting them.
func TestStreamKindsUnknown(t *testing.T) {
	c, _, _, _, b2, n2, sync := nullCapture(false)
	tl := build(t, c, timeline.Options{})
	if len(tl.StreamWaits) != 0 {
		t.Errorf("stream waits %+v without stream kinds, want none", tl.StreamWaits)
	}
	if w := waitOf(tl, callOf(t, tl, sync)); w == nil || !slices.Equal(w.On, []int32{opOf(t, tl, b2)}) {
		t.Errorf("stream 13's synchronisation waits %+v, want only its own last op", w)
	}
	_ = n2
	want := timeline.Assumption{Kind: timeline.AssumeStreamKindsUnknown, PID: timelinetest.PID, Event: -1, Stream: -1, Count: 3}
	if !slices.Contains(tl.Assumptions, want) {
		t.Errorf("assumptions %+v, want %+v", tl.Assumptions, want)
	}
}

// A context listing two NULL streams says nothing of which is its NULL
// stream: its streams stay independent, and the timeline says so.
func TestTwoNullStreams(t *testing.T) {
	c, _, _, _, _, _, _ := nullCapture(false)
	c.StreamOf(7, records.StreamNull)
	c.StreamOf(13, records.StreamNull)
	c.StreamOf(14, records.StreamNonBlocking)
	tl := build(t, c, timeline.Options{})
	if len(tl.StreamWaits) != 0 {
		t.Errorf("stream waits %+v with two NULL streams, want none", tl.StreamWaits)
	}
	want := timeline.Assumption{Kind: timeline.AssumeStreamKindsUnknown, PID: timelinetest.PID, Event: -1, Stream: -1, Count: 3}
	if !slices.Contains(tl.Assumptions, want) {
		t.Errorf("assumptions %+v, want %+v", tl.Assumptions, want)
	}
}

// An op the legacy default stream's order makes wait for another's,
// queued before it, yet shown running while that op ran, is refused
// naming both (LegacyOrderError), either way round: a NULL-stream kernel
// overlapping the blocking stream's kernel before it, and a blocking
// stream's kernel overlapping the NULL stream's. Where the calls overlap
// on two threads, which op was queued first is not known: no refusal.
func TestLegacyOrderContradicted(t *testing.T) {
	cases := []struct {
		name            string
		make            func(c *timelinetest.Capture) (waiting, on int64)
		refused         bool
		waitKind, onStr string
	}{
		{"a NULL-stream kernel running beside the blocking kernel before it", func(c *timelinetest.Capture) (int64, int64) {
			b := c.Launch(1, 0, 10, 13, 20, 400)
			n := c.Launch(1, 20, 30, 7, 300, 500)
			return n, b
		}, true, "legacy default (NULL) stream 7", "blocking stream 13"},
		{"a blocking kernel running beside the NULL-stream kernel before it", func(c *timelinetest.Capture) (int64, int64) {
			n := c.Launch(1, 0, 10, 7, 20, 400)
			b := c.Launch(1, 20, 30, 13, 100, 500)
			return b, n
		}, true, "blocking stream 13", "legacy default (NULL) stream 7"},
		{"two threads' launches overlapping: the order is not known", func(c *timelinetest.Capture) (int64, int64) {
			b := c.Launch(1, 0, 50, 13, 60, 400)
			n := c.Launch(2, 20, 30, 7, 300, 500)
			return n, b
		}, false, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &timelinetest.Capture{}
			waiting, on := tc.make(c)
			c.StreamOf(7, records.StreamNull)
			c.StreamOf(13, records.StreamBlocking)
			_, err := c.Build(t.Context(), timeline.Options{})
			var le *timeline.LegacyOrderError
			if !tc.refused {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.As(err, &le) || le.Waiting.Corr != waiting || le.On.Corr != on {
				t.Fatalf("err = %v, want a LegacyOrderError of correlation id %d waiting on %d", err, waiting, on)
			}
			for _, want := range []string{tc.waitKind, tc.onStr, "the ops' times contradict the order the streams' kinds imply"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%v\nsays no %q", err, want)
				}
			}
		})
	}
}
