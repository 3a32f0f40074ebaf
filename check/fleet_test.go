package check

import (
	"math"
	"testing"

	"github.com/nsyscheck/nsyscheck/fleet"
)

// Fleet over real run folders: each row's numbers come from its result and
// run.json; the shared run is named an outlier below its link and its peers
// in both directions, with a fleet-outlier warning on its result alone; one run folder is
// no fleet unless the caller asks for one.
func TestFleetRunFolders(t *testing.T) {
	dirs := []string{"../testdata/fleet/h200-numactl", "../testdata/fleet/h200-queued", "../testdata/captures/h200-run", "../testdata/fleet/h200-shared"}
	ks, err := Paths(dirs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := Fleet(ks, 2)
	if s == nil || len(s.Rows) != 4 {
		t.Fatalf("fleet: %+v", s)
	}
	for i, want := range []struct {
		name     string
		h2d, d2h float64
		binding  string
		outlier  bool
	}{
		{"fleet/h200-numactl", 54.4, 54.9, "numactl", false},
		{"fleet/h200-queued", 54.8, 54.9, "none", false},
		{"captures/h200-run", 55.2, 55.2, "", false},
		{"fleet/h200-shared", 29.1, 34.7, "none", true},
	} {
		r := s.Rows[i]
		if r.Name != want.name || math.Abs(r.H2DGBps-want.h2d) > 0.05 || math.Abs(r.D2HGBps-want.d2h) > 0.05 ||
			r.Binding != want.binding || r.Outlier != want.outlier || r.RatedGBps < 63 || r.RatedGBps > 63.1 {
			t.Errorf("row %d: %+v, want %+v", i, r, want)
		}
		_, warned := codes(ks[i].Result)[fleet.CodeOutlier]
		if warned != want.outlier {
			t.Errorf("row %d: fleet-outlier warning %v", i, warned)
		}
	}
	if !s.Rows[3].Shared || len(s.Findings) != 4 {
		t.Errorf("shared row %+v, findings %+v", s.Rows[3], s.Findings)
	}
	one, err := Paths(dirs[:1], Options{})
	if err != nil {
		t.Fatal(err)
	}
	if Fleet(one, 2) != nil {
		t.Error("one run folder made a fleet of two")
	}
	if s := Fleet(one, 1); s == nil || len(s.Rows) != 1 || len(s.Findings) != 0 {
		t.Errorf("fleet of one: %+v", s)
	}
	plain, err := Paths([]string{"../testdata/captures/h200-pinned/pinned.sqlite"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if Fleet(plain, 1) != nil {
		t.Error("an export without run.json made a fleet row")
	}
}
