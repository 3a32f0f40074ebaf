package audit

import (
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/replay"
)

// sharedAudit is an audit of one class in one region of 10 instances, its
// class's share the one the region gives it.
func sharedAudit() *Audit {
	r := Region{Measure: MeasureMedian, Region: replay.Region{Name: "step", Instances: 10, MedianMs: 2, SpanMs: 30, TotalMs: 20, CopyCallMs: 4,
		HostShare: replay.Share{Measured: 0.2}, Overlap: replay.Share{Measured: 0.5}, Queued: replay.Share{Measured: 0.1}}}
	c := &Class{ClassKey: ClassKey{Range: "step"}, Count: 1, HostNs: 4_000_000}
	au := &Audit{Copies: 1, Classes: []*Class{c}, Totals: []Total{{Count: 1, HostNs: 4_000_000}}, Regions: []Region{r}}
	c.HostShare = au.Regions[0].ShareOf(4)
	return au
}

func TestPlausibleShares(t *testing.T) {
	if err := Plausible(sharedAudit()); err != nil {
		t.Fatalf("the audit as made: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(au *Audit)
		want string
	}{
		{"a class's share below zero", func(au *Audit) { au.Classes[0].HostShare = -0.5 }, "hostShare is -0.5, not a share"},
		{"a class's share not its region's", func(au *Audit) { au.Classes[0].HostShare = 4 }, `hostShare is 4, but its 4000000 ns of host time are a share of 0.2 of its region "step"`},
		{"a class's GPU rate not its bytes over its time", func(au *Audit) {
			c := au.Classes[0]
			c.Bytes, c.GPUNs, c.GPUGBps = 1000, 100, 99
			au.Totals[0].Bytes, au.Totals[0].GPUNs = 1000, 100
		}, "gpuGBps is 99 GB/s, but its 1000 bytes in 100 ns are 10 GB/s"},
		{"a region of no instance that took time", func(au *Audit) { au.Regions[0].Instances = 0 }, `regions[0] ("step").instances is 0, but the region has a time (medianMs 2`},
		{"a region measured by its span, no instance behind the host", func(au *Audit) { au.Regions[0].Measure = MeasureSpan }, `regions[0] ("step").measure is span, but its 10 instances, a share of 0 of them predicted to run behind the host, are measured by their median`},
		{"a pageable share not its pageable calls' time", func(au *Audit) { au.Regions[0].PageableShare = 0.15 }, `pageableShare is 0.15, but its pageable copy calls' 0 ms are a share of 0 of it`},
		{"copies overlapped past their time", func(au *Audit) { au.Regions[0].Overlap.Measured = 1.7 }, `regions[0] ("step").overlap.measured is 1.7, above 1`},
		{"more instances queued than ran", func(au *Audit) { au.Regions[0].Queued.Predicted = 2 }, `queued.predicted is 2, above 1`},
		{"one instance's share not its calls' time over its time", func(au *Audit) {
			r := &au.Regions[0]
			r.Instances, r.SpanMs, r.TotalMs, r.HostShare.Measured = 1, 2, 2, 3
			au.Classes[0].HostShare = r.ShareOf(4)
		}, "hostShare.measured is 3, but its one instance of 2 ms held the host 4 ms in copy calls, a share of 2"},
	} {
		au := sharedAudit()
		tc.edit(au)
		err := Plausible(au)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// Copy calls of several threads may hold the host longer than the
	// instance: a share above 1 is no edit.
	au := sharedAudit()
	au.Regions[0].HostShare.Measured = 1.6
	au.Classes[0].HostShare = au.Regions[0].ShareOf(4)
	if err := Plausible(au); err != nil {
		t.Errorf("a share of several threads' calls: %v", err)
	}
}
