package replay_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/source"
	"github.com/nsyscheck/nsyscheck/timeline"
)

// TestReaderBuildsTheSameTimeline: the reader every command reads an
// export with (capture.Read, through nsyssqlite) hands the timeline the
// records this file's
// plain SQL hands it, on every shipped export: the same calls and GPU
// operations, each op tied to the same call, the same waits on GPU work
// (syncs and their kinds, event records) and the same waits across
// streams.
func TestReaderBuildsTheSameTimeline(t *testing.T) {
	for _, path := range shipped(t) {
		want := sharedExport(t, path, timeline.Options{})
		src, err := source.Open(context.Background(), path, source.Options{})
		if err != nil {
			t.Fatal(err)
		}
		b := timeline.NewBuilder(context.Background(), timeline.Options{})
		h := b.Handler()
		h.Gap = nil // the plain SQL says nothing of what an export lacks
		_, err = capture.Read(context.Background(), src, records.Selection{}, h)
		src.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		got, err := b.Finish()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, c := range []struct {
			what      string
			got, want any
		}{
			{"call times", [][]int64{got.Calls.Start, got.Calls.End, got.Calls.Corr}, [][]int64{want.Calls.Start, want.Calls.End, want.Calls.Corr}},
			{"ops", opsOf(got), opsOf(want)},
			{"ops of each call", [][]int32{got.CallOpStart, got.CallOpList}, [][]int32{want.CallOpStart, want.CallOpList}},
			{"waits", got.Waits, want.Waits},
			{"stream waits", got.StreamWaits, want.StreamWaits},
			{"streams", got.Streams, want.Streams},
		} {
			if !reflect.DeepEqual(c.got, c.want) {
				t.Errorf("%s: the readers' %s differ", path, c.what)
			}
		}
	}
}

// opsOf is a timeline's ops with each kernel's name spelled out (nil
// index for none), as the readers intern names in their own order.
func opsOf(tl *timeline.Timeline) any {
	o := tl.Ops
	names := make([]string, len(o.Name))
	for i, n := range o.Name {
		if n >= 0 && int(n) < len(tl.Names) {
			names[i] = tl.Names[n]
		}
	}
	o.Name = nil
	return []any{o, names}
}
