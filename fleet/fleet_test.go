package fleet

import (
	"math"
	"testing"
)

func h200(name string, gpu int, h2d, d2h float64) Entry {
	return Entry{Name: name, Host: "node1", GPU: gpu, Model: "NVIDIA H200", NUMANode: gpu / 4, Binding: "numactl",
		Link: Link{Gen: 5, Width: 16}, RatedGBps: 63.015, H2DGBps: h2d, D2HGBps: d2h, Held: 4, Predictions: 4}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

// Eight H200s measured like the real one (about 55 GB/s each way) and one
// whose link trained down to Gen4 (about 26): only that one is named, below
// its rating and below its peers, with the numbers; efficiencies and peer
// medians are computed.
func TestSummarizeDegradedLink(t *testing.T) {
	var entries []Entry
	for i := 0; i < 7; i++ {
		entries = append(entries, h200("n1/gpu"+string(rune('0'+i)), i, 54.7+0.1*float64(i), 54.9))
	}
	slow := h200("n1/gpu7", 7, 26.1, 26.3)
	slow.Link = Link{Gen: 5, Width: 16, SeenGen: 4, SeenWidth: 16}
	entries = append(entries, slow)
	s := Summarize(entries, DefaultThresholds)
	if len(s.Rows) != 8 {
		t.Fatalf("%d rows", len(s.Rows))
	}
	for i, r := range s.Rows[:7] {
		if r.Outlier {
			t.Errorf("healthy GPU %d marked: %+v", i, r)
		}
	}
	r := s.Rows[7]
	if !r.Outlier || r.Peers != 7 || !near(r.H2DShare, 26.1/63.015) || !near(r.PeerH2D, 55.0) || !near(r.PeerD2H, 54.9) {
		t.Errorf("slow row: %+v", r)
	}
	if len(s.Findings) != 4 {
		t.Fatalf("findings: %+v", s.Findings)
	}
	kinds := map[string]bool{}
	for _, f := range s.Findings {
		if f.Row != 7 || f.Name != "n1/gpu7" {
			t.Errorf("finding names %d %s", f.Row, f.Name)
		}
		kinds[f.Kind+"/"+f.Direction] = true
	}
	for _, k := range []string{"below-rated/h2d", "below-rated/d2h", "below-peers/h2d", "below-peers/d2h"} {
		if !kinds[k] {
			t.Errorf("no %s finding", k)
		}
	}
	f := s.Findings[0]
	if f.Kind != "below-rated" || f.GPU != 7 || math.Abs(f.Got-26.1) > 0.05 || math.Round(100*f.Share) != 41 ||
		math.Abs(f.RatedGBps-63) > 0.05 || f.Link.SeenGen != 4 || f.Threshold != DefaultThresholds.BelowRated {
		t.Errorf("finding %+v, want GPU 7's 26.1 GB/s, 41%% of its Gen4 link's 63.0 GB/s", f)
	}
}

// A GPU at a healthy share of its link but well below its peers (host
// memory on the far socket costs a share without breaking the link) is
// named only for its peers; a lone GPU has no peers; a GPU of another model
// is not anyone's peer.
func TestSummarizePeersAndModels(t *testing.T) {
	a, b, c := h200("a", 0, 55, 55), h200("b", 1, 55, 55), h200("c", 2, 45, 55)
	s := Summarize([]Entry{a, b, c}, DefaultThresholds)
	if len(s.Findings) != 1 || s.Findings[0].Kind != "below-peers" || s.Findings[0].Direction != "h2d" || s.Findings[0].Row != 2 {
		t.Fatalf("findings: %+v", s.Findings)
	}
	if f := s.Findings[0]; f.Got != 45 || math.Round(100*f.Share) != 82 || f.PeerMedian != 55 || f.Peers != 2 || f.Model != a.Model {
		t.Errorf("finding %+v, want 45.0 GB/s, 82%% of its 2 peers' median 55.0 GB/s", f)
	}
	if c := s.Findings[0].Cause; c != CauseLink {
		t.Errorf("cause of a bound, unshared GPU: %v", c)
	}
	c.Shared = true
	s = Summarize([]Entry{a, b, c}, DefaultThresholds)
	if c := s.Findings[0].Cause; c != CauseShared {
		t.Errorf("cause of a shared GPU: %v", c)
	}
	c.Shared, c.Binding = false, "none"
	s = Summarize([]Entry{a, b, c}, DefaultThresholds)
	if c := s.Findings[0].Cause; c != CauseLinkOrNUMA {
		t.Errorf("cause of an unbound GPU: %v", c)
	}
	lone := Summarize([]Entry{c}, DefaultThresholds)
	if len(lone.Findings) != 0 || lone.Rows[0].Peers != 0 || lone.Rows[0].PeerH2D != 0 {
		t.Errorf("lone: %+v", lone)
	}
	t4 := Entry{Name: "t4", GPU: 0, Model: "Tesla T4", NUMANode: -1, Link: Link{Gen: 3, Width: 16}, RatedGBps: 15.75, H2DGBps: 12.3, D2HGBps: 13.1}
	s = Summarize([]Entry{a, b, t4}, DefaultThresholds)
	if len(s.Findings) != 0 || s.Rows[2].Peers != 0 {
		t.Errorf("mixed models: %+v", s)
	}
	// Unknown numbers neither flag nor divide by zero.
	unknown := Entry{Name: "u", GPU: -1, Model: "NVIDIA H200", NUMANode: -1}
	s = Summarize([]Entry{a, unknown}, DefaultThresholds)
	if len(s.Findings) != 0 || s.Rows[1].H2DShare != 0 {
		t.Errorf("unknown: %+v", s)
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := Median(c.in); got != c.want {
			t.Errorf("Median(%v) = %g, want %g", c.in, got, c.want)
		}
	}
}
