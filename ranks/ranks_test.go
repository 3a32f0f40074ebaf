package ranks

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/replay"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// A rank is the number nsys's %q{RANK} puts in a name: after the word
// rank where the name says it (rank0-v2 is rank 0, not 2), else the last
// number; a name with several numbers, or none, is no plain one.
func TestRankOf(t *testing.T) {
	for in, want := range map[string]string{
		"run/report.17.nsys-rep": "17", "run/report.017.sqlite": "17", "rank-3.sqlite": "3", "out/rank3/": "3",
		"report.0.nsyscheck.sqlite": "0", "shard-2.json": "2", "capture.sqlite": "capture", "a/b": "b",
		"rank0-v2.sqlite": "0", "rank1-v2.sqlite": "1", "job_RANK_12.nsys-rep": "12", "node3-rank-07.sqlite": "7", "run2/step-5.sqlite": "5",
	} {
		if got := RankOf(in); got != want {
			t.Errorf("RankOf(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]bool{"report.17.nsys-rep": true, "rank3.sqlite": true, "rank0-v2.sqlite": false, "capture.sqlite": false, "node3-rank-07.sqlite": false} {
		if got := RankPlain(in); got != want {
			t.Errorf("RankPlain(%q) = %v, want %v", in, got, want)
		}
	}
}

// rankAudit is an audit of one rank: its copies, pageable among them, and
// its region step's time now and pinned.
func rankAudit(copies, pageable int64, nowMs, pinnedMs float64) *audit.Audit {
	au := &audit.Audit{Copies: copies, Prediction: &audit.Prediction{SavedNs: int64(1e6 * (nowMs - pinnedMs))}}
	au.Totals = []audit.Total{{Direction: vocab.CopyHtoD, HostMemory: audit.Pinned, Count: copies - pageable},
		{Direction: vocab.CopyHtoD, HostMemory: audit.Pageable, Count: pageable}}
	for _, name := range []string{replay.CaptureRegion, "step"} {
		g := audit.Region{Measure: audit.MeasureMedian}
		g.Name, g.Instances, g.MedianMs, g.PredictedMedianMs, g.CopyCallMs = name, 10, nowMs, pinnedMs, 1
		if name == replay.CaptureRegion {
			g.MedianMs, g.PredictedMedianMs = 10*nowMs, 10*pinnedMs
		}
		au.Regions = append(au.Regions, g)
	}
	return au
}

// TestSummarize: each rank against the median of the others; a slow rank
// and a pageable one stand out, a rank that could not be audited is a row
// of its own and no one's peer; rows in rank order.
func TestSummarize(t *testing.T) {
	var in []Audited
	for r := 9; r >= 0; r-- {
		au := rankAudit(100, 0, 20+0.1*float64(r), 20)
		switch r {
		case 3:
			au = rankAudit(100, 0, 30, 30) // 1.5x its peers
		case 7:
			au = rankAudit(100, 60, 21, 12) // 60% pageable
		}
		in = append(in, Audited{Capture: "run/report." + string(rune('0'+r)) + ".sqlite", Audit: au})
	}
	in = append(in, Audited{Capture: "run/report.10.sqlite", Err: errors.New("damaged")})
	s := Summarize(in, DefaultThresholds)
	if s.Region != "step" || len(s.Rows) != 11 {
		t.Fatalf("region %q, %d rows", s.Region, len(s.Rows))
	}
	for i, r := range s.Rows {
		if want := []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}[i]; r.Rank != want {
			t.Errorf("row %d is rank %s, want %s", i, r.Rank, want)
		}
	}
	if r := s.Rows[10]; r.Err != "damaged" || r.Outlier || r.Copies != 0 {
		t.Errorf("the rank not audited: %+v", r)
	}
	if r := s.Rows[0]; r.Peers != 9 || r.PeerNowMs != 20.6 || r.Outlier {
		t.Errorf("rank 0: %+v", r)
	}
	kinds := map[string][]string{}
	for _, f := range s.Findings {
		kinds[f.Rank] = append(kinds[f.Rank], f.Kind)
	}
	if len(kinds) != 2 || len(kinds["3"]) != 1 || kinds["3"][0] != KindSlower || len(kinds["7"]) != 1 || kinds["7"][0] != KindPageable {
		t.Errorf("findings %+v", s.Findings)
	}
	if r := s.Rows[7]; r.Pageable != 0.6 || r.Saving < 0.42 || r.Saving > 0.43 || !r.Outlier {
		t.Errorf("rank 7: %+v", r)
	}
	// One rank alone has no peers and stands out from none.
	if one := Summarize(in[:1], DefaultThresholds); len(one.Findings) != 0 || one.Rows[0].Peers != 0 {
		t.Errorf("one rank: %+v", one)
	}
}

// TestSlowerOnAnotherGPU: a rank slower than its peers that ran on
// another GPU than every one of them says so, with the GPU most of them
// ran on; a slow rank on its peers' GPU, or one whose capture names no
// GPU, says nothing of GPUs.
func TestSlowerOnAnotherGPU(t *testing.T) {
	job := func(gpus ...string) Summary {
		var in []Audited
		for r, gpu := range gpus {
			au := rankAudit(100, 0, 20, 20)
			if r == 0 {
				au = rankAudit(100, 0, 30, 30) // 1.5x its peers
			}
			au.GPU = gpu
			in = append(in, Audited{Capture: "run/report." + string(rune('0'+r)) + ".sqlite", Audit: au})
		}
		s := Summarize(in, DefaultThresholds)
		if len(s.Findings) != 1 || s.Findings[0].Rank != "0" || s.Findings[0].Kind != KindSlower {
			t.Fatalf("%v: findings %+v, want rank 0 slower", gpus, s.Findings)
		}
		return s
	}
	const h200, t4, a100 = "NVIDIA H200", "Tesla T4", "NVIDIA A100-SXM4-80GB"
	if f := job(t4, h200, a100, h200).Findings[0]; f.GPU != t4 || f.PeerGPU != h200 || job(t4, h200, a100, h200).Rows[0].GPU != t4 {
		t.Errorf("rank 0 on a T4 beside H200s and an A100: %+v", f)
	}
	for _, gpus := range [][]string{{h200, h200, h200}, {t4, h200, t4}, {"", h200, h200}, {t4, "", ""}} {
		if f := job(gpus...).Findings[0]; f.GPU != "" || f.PeerGPU != "" {
			t.Errorf("%q: %+v, want no GPU said", gpus, f)
		}
	}
}

// TestOtherProgramIsNoPeer: a rank whose capture moves ten times the
// bytes of the job's others runs another program; it is listed as unlike
// beside the job's first rank, compared with no rank of the job, and the
// job's ranks are compared only with each other; where the odd one is
// rank 0, the job's program is still the one most ranks run.
func TestOtherProgramIsNoPeer(t *testing.T) {
	withBytes := func(au *audit.Audit, b int64) *audit.Audit {
		au.Totals[0].Bytes, au.Totals[1].Bytes = b, 0
		return au
	}
	for _, odd := range []int{0, 3} {
		var in []Audited
		for r := 0; r < 4; r++ {
			au := withBytes(rankAudit(100, 0, 20, 20), 1<<30)
			if r == odd {
				au = withBytes(rankAudit(100, 80, 60, 20), 10<<30) // slower and pageable: other work
			}
			in = append(in, Audited{Capture: "run/report." + string(rune('0'+r)) + ".sqlite", Audit: au})
		}
		s := Summarize(in, DefaultThresholds)
		if len(s.Findings) != 0 {
			t.Errorf("odd rank %d: findings %+v, want none (no rank of the job differs from its peers)", odd, s.Findings)
		}
		peer := "0"
		if odd == 0 {
			peer = "1"
		}
		if len(s.Unlike) != 1 || s.Unlike[0].Rank != string(rune('0'+odd)) || s.Unlike[0].Peer != peer {
			t.Errorf("odd rank %d: unlike %+v, want rank %d beside rank %s", odd, s.Unlike, odd, peer)
		}
		for i, r := range s.Rows {
			want := 2
			if i == odd {
				want = 0
			}
			if r.Peers != want || r.Outlier {
				t.Errorf("odd rank %d: rank %s has %d peers (outlier %v), want %d", odd, r.Rank, r.Peers, r.Outlier, want)
			}
		}
	}
}

// TestUnlikeJSON: a rank of another program is written with its
// differences under the schema's names, and read back whole.
func TestUnlikeJSON(t *testing.T) {
	u := Unlike{Rank: "1", Capture: "b.sqlite", Peer: "0", PeerCapture: "a.sqlite", Differences: []audit.Difference{
		{What: audit.DiffBytes, Direction: vocab.CopyHtoD, Before: 10, After: 2, Share: -0.8},
		{What: audit.DiffKernels, Before: 5, After: 7, Share: 1, OnlyAfter: []string{"k"}, NamesAfter: 1},
	}}
	b, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"what":"bytes"`, `"before":10`, `"share":-0.8`, `"onlyAfter":["k"]`, `"namesAfter":1`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("%s lacks %s", b, key)
		}
	}
	var back Unlike
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, u) {
		t.Errorf("read back %+v (%v), want %+v", back, err, u)
	}
}

// TestOtherRunIsNoPeer: a rank of the job's program whose session started
// a day after the others' (a rank re-run beside the job's folder) is
// listed as of another run beside the job's first rank and compared with
// no rank of this run; a rank started 30 s after the others' end, or one
// whose capture does not say when it started, is still a peer.
// A session start edited to the largest int64 (the year 2262) is another
// run's, not one whose end wraps round to before 1970 and so lies beside
// every run.
func TestSessionStartAtMaxIsAnotherRun(t *testing.T) {
	a, b := rankAudit(100, 0, 20, 20), rankAudit(100, 0, 20, 20)
	a.SpanNs, a.SessionStartNs = 13_808_483_210, 1796188822143396975
	b.SpanNs, b.SessionStartNs = 13_808_483_210, math.MaxInt64
	if g := runGap(a, b); g != math.MaxInt64-(a.SessionStartNs+a.SpanNs) || sameRun(a, b) || sameRun(b, a) {
		t.Errorf("gap %d, same run %v: want the start at the int64 limit another run's", g, sameRun(a, b))
	}
}

func TestOtherRunIsNoPeer(t *testing.T) {
	const start, span = int64(1796188822143396975), int64(13_808_483_210)
	late := map[int]int64{1: 86_400_000_000_000, 2: span + 30_000_000_000, 3: -start}
	var in []Audited
	for r := 0; r < 4; r++ {
		au := rankAudit(100, 0, 20, 20)
		au.SpanNs, au.SessionStartNs = span, start+late[r]
		in = append(in, Audited{Capture: "run/report." + string(rune('0'+r)) + ".sqlite", Audit: au})
	}
	s := Summarize(in, DefaultThresholds)
	want := []OtherRun{{Rank: "1", Capture: "run/report.1.sqlite", Peer: "0", PeerCapture: "run/report.0.sqlite",
		GapNs: 86_400_000_000_000 - span, StartNs: start + late[1], PeerStartNs: start}}
	if !reflect.DeepEqual(s.OtherRun, want) {
		t.Errorf("other run %+v, want %+v", s.OtherRun, want)
	}
	if len(s.Unlike) != 0 {
		t.Errorf("unlike %+v, want none: every rank runs one program", s.Unlike)
	}
	for i, r := range s.Rows {
		if want := map[bool]int{true: 0, false: 2}[i == 1]; r.Peers != want {
			t.Errorf("rank %s has %d peers, want %d", r.Rank, r.Peers, want)
		}
	}
}

// A rank whose capture records a start no session can have is said, in
// rank order, with why; one whose capture records no start at all (a CSV
// folder, an older audit's JSON) is not: that is no fault of its capture.
func TestBadSessionStart(t *testing.T) {
	var in []Audited
	for _, r := range []string{"3", "1", "0", "2"} {
		au := rankAudit(100, 0, 20, 20)
		au.SpanNs, au.SessionStartNs = 13_808_483_210, 1796188822143396975
		switch r {
		case "1", "3":
			au.SessionStartNs, au.SessionStartFault = 0, "TARGET_INFO_SESSION_START_TIME.utcEpochNs holds -"+r+" ns"
		case "2":
			au.SessionStartNs = 0
		}
		in = append(in, Audited{Capture: "run/report." + r + ".sqlite", Audit: au})
	}
	s := Summarize(in, DefaultThresholds)
	want := []BadStart{{Rank: "1", Capture: "run/report.1.sqlite", Fault: "TARGET_INFO_SESSION_START_TIME.utcEpochNs holds -1 ns"},
		{Rank: "3", Capture: "run/report.3.sqlite", Fault: "TARGET_INFO_SESSION_START_TIME.utcEpochNs holds -3 ns"}}
	if !reflect.DeepEqual(s.BadStart, want) || len(s.OtherRun) != 0 {
		t.Errorf("bad starts %+v, other runs %+v; want %+v and no other run", s.BadStart, s.OtherRun, want)
	}
}

// Two captures that name two jobs are of two runs, however close their
// sessions started; one that names none is set beside either.
func TestOtherJobIsAnotherRun(t *testing.T) {
	var in []Audited
	for r, job := range []string{"SLURM_JOB_ID a", "SLURM_JOB_ID a", "", "SLURM_JOB_ID b"} {
		au := rankAudit(100, 0, 20, 20)
		au.SpanNs, au.SessionStartNs, au.Job = 13_808_483_210, 1796188822143396975+int64(r), job
		in = append(in, Audited{Capture: "run/report." + string(rune('0'+r)) + ".sqlite", Audit: au})
	}
	s := Summarize(in, DefaultThresholds)
	want := []OtherRun{{Rank: "3", Capture: "run/report.3.sqlite", Peer: "0", PeerCapture: "run/report.0.sqlite",
		GapNs: 0, StartNs: 1796188822143396978, PeerStartNs: 1796188822143396975, Job: "SLURM_JOB_ID b", PeerJob: "SLURM_JOB_ID a"}}
	if !reflect.DeepEqual(s.OtherRun, want) {
		t.Errorf("other run %+v, want %+v", s.OtherRun, want)
	}
}
