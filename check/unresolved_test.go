package check

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/internal/fixture"
)

// The shipped pipeline and PyTorch prefetch captures wait across streams
// (cudaStreamWaitEvent) and on events (cudaEventSynchronize, polled
// cudaEventQuery). Without their CUDA event records (the table dropped, or
// emptied) no wait can be tied to the work it waited for, and without
// their synchronisation records no wait names its event; the replay takes
// each such wait to wait for none: every region one lies in is
// unavailable (audit.WhyUnresolved), never held, where the shipped
// exports hold.
func TestAuditUnresolvedWaitsUnavailable(t *testing.T) {
	captures := filepath.Join("..", "testdata", "captures")
	for _, c := range []struct {
		before, after string
		regions       map[string]int // region -> unresolved waits in it
		unnamed       map[string]int // the same without the synchronisation records
	}{
		{"pipeline-pageable/pipeline-pageable.sqlite", "pipeline-pinned/pipeline-pinned.sqlite", map[string]int{"warmup": 2, "pass": 10}, map[string]int{"warmup": 1, "pass": 5}},
		{"torch-prefetch-pageable/torch-prefetch-pageable.sqlite", "torch-prefetch-pinned/torch-prefetch-pinned.sqlite", map[string]int{"warmup": 6, "step": 60}, map[string]int{"warmup": 5, "step": 60}},
	} {
		before, after := filepath.Join(captures, c.before), filepath.Join(captures, c.after)
		shipped, err := Audit(context.Background(), before, after, AuditOptions{NoRule: true})
		if err != nil {
			t.Fatal(err)
		}
		if shipped.Check.Verdict != audit.Held {
			t.Fatalf("%s: the shipped pair: %s, want held", c.before, shipped.Check.Verdict)
		}
		for _, r := range shipped.Check.Regions {
			if r.Unresolved != nil {
				t.Errorf("%s: the shipped export's region %s has %d unresolved waits", c.before, r.Name, r.Unresolved.Waits)
			}
		}
		for _, damage := range []struct {
			stmt            string
			noTable, noSync bool
		}{{`DROP TABLE CUPTI_ACTIVITY_KIND_CUDA_EVENT`, true, false}, {`DELETE FROM CUPTI_ACTIVITY_KIND_CUDA_EVENT`, false, false},
			{`DROP TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION`, false, true}} {
			p := fixture.SQLite(t, before, damage.stmt)
			out, err := Audit(context.Background(), p, after, AuditOptions{NoRule: true})
			if err != nil {
				t.Fatal(err)
			}
			if out.Check.Verdict != audit.Unavailable {
				t.Errorf("%s, %s: %s, want unavailable", c.before, damage.stmt, out.Check.Verdict)
			}
			for _, r := range out.Check.Regions {
				want, judged := c.regions[r.Name]
				records, unnamed := 0, 0
				if damage.noSync {
					want, judged = c.unnamed[r.Name]
					records, unnamed = -1, want
				}
				if !judged {
					continue
				}
				if r.Verdict != audit.Unavailable || r.Why != audit.WhyUnresolved || r.Unresolved == nil {
					t.Errorf("%s, %s: region %s: %s (%s), want unavailable (unresolved)", c.before, damage.stmt, r.Name, r.Verdict, r.Why)
					continue
				}
				u := r.Unresolved
				if u.Waits != want || u.Unnamed != unnamed || u.NoTable != damage.noTable || u.NoSyncTable != damage.noSync ||
					records == 0 && u.EventRecords != 0 || records < 0 && u.EventRecords == 0 {
					t.Errorf("%s, %s: region %s: %+v, want %d waits, %d unnamed, no event table %v, no sync table %v", c.before, damage.stmt, r.Name, *u, want, unnamed, damage.noTable, damage.noSync)
				}
			}
		}
	}
}

// The shipped pipeline with the last recording of event 2 deleted: the
// wait whose synchronisation record names that recording (eventSyncId 14)
// is replayed as waiting for the event's recording before it, a guess, so
// its region is unavailable (once held); warmup, without such a wait,
// still holds.
func TestAuditUnmatchedRecordingUnavailable(t *testing.T) {
	captures := filepath.Join("..", "testdata", "captures")
	p := fixture.SQLite(t, filepath.Join(captures, "pipeline-pageable", "pipeline-pageable.sqlite"),
		`DELETE FROM CUPTI_ACTIVITY_KIND_CUDA_EVENT WHERE eventId = 2 AND eventSyncId = 14`)
	out, err := Audit(context.Background(), p, filepath.Join(captures, "pipeline-pinned", "pipeline-pinned.sqlite"), AuditOptions{NoRule: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out.Check.Regions {
		switch r.Name {
		case "pass":
			if u := r.Unresolved; r.Why != audit.WhyUnresolved || u == nil || u.Waits != 1 || u.Unmatched != 1 || u.Unnamed != 0 {
				t.Errorf("pass: %s (%s), %+v; want unavailable, 1 wait naming a recording not held", r.Verdict, r.Why, u)
			}
		case "warmup":
			if r.Verdict != audit.Held || r.Unresolved != nil {
				t.Errorf("warmup: %s (%s), %+v; want held", r.Verdict, r.Why, r.Unresolved)
			}
		}
	}
}
