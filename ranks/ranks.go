// Package ranks sets the audits of the captures of one distributed job side
// by side, a row per rank (one capture per rank, as nsys profile -o
// report.%q{RANK} writes them), and names the ranks that stand out against
// their peers, the job's other ranks: the peers-median rule of the fleet
// package, for a job's ranks instead of a machine's GPUs. It computes only:
// check audits the captures and report renders the table.
package ranks

import (
	"cmp"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/fleet"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// Row is one rank's audit in numbers.
type Row struct {
	// Rank names the rank: the number in its capture's name
	// (report.17.nsys-rep is rank 17), else the name itself.
	Rank    string `json:"rank"`
	Capture string `json:"capture"`
	// Err says why the rank's capture could not be audited; the row's
	// numbers are zero then.
	Err string `json:"error,omitempty"`
	// Copies counts the rank's copies; Pageable is the share of its
	// host-device copies from pageable memory.
	Copies   int64   `json:"copies"`
	Pageable float64 `json:"pageableShare"`
	// SavedNs is the copy calls' host time pinning is predicted to save
	// (audit.Prediction.SavedNs).
	SavedNs int64 `json:"savedNs"`
	// Region is the region the times are of (Summary.Region), "" where the
	// rank has none of that name; NowMs its time now (its measure),
	// PinnedMs predicted with the copies pinned, Saving the share pinning
	// cuts.
	Region   string  `json:"region"`
	NowMs    float64 `json:"nowMs"`
	PinnedMs float64 `json:"pinnedMs"`
	Saving   float64 `json:"saving"`
	// PeerNowMs and PeerPageable are the medians of the other ranks
	// audited (0 with no peer); Peers counts them.
	PeerNowMs    float64 `json:"peerNowMs"`
	PeerPageable float64 `json:"peerPageableShare"`
	Peers        int     `json:"peers"`
	// Outlier is true when a finding names the rank.
	Outlier bool `json:"outlier"`
	// GPU is the GPU the rank's capture was made on ("" where it does
	// not say).
	GPU string `json:"gpu,omitempty"`
}

// Thresholds decide which ranks stand out.
type Thresholds struct {
	// SlowerThanPeers names a rank whose region takes more than this many
	// times its peers' median (e.g. 1.15).
	SlowerThanPeers float64 `json:"slowerThanPeers"`
	// PageableAbovePeers names a rank whose pageable share of copies is
	// more than this above its peers' median (e.g. 0.10: ten points).
	PageableAbovePeers float64 `json:"pageableAbovePeers"`
}

// DefaultThresholds: the ranks of one data-parallel job run one program on
// one kind of GPU, so their step times agree within a few percent;
// fleet.DefaultThresholds names a GPU 15% below its peers as the same
// mark.
var DefaultThresholds = Thresholds{SlowerThanPeers: 1 / fleet.DefaultThresholds.BelowPeers, PageableAbovePeers: 0.10}

// The kinds of finding.
const (
	KindSlower   = "slower-than-peers"
	KindPageable = "more-pageable-than-peers"
)

// Finding is one rank standing out against its peers.
type Finding struct {
	// Row is the index of the row the finding names.
	Row  int    `json:"row"`
	Rank string `json:"rank"`
	Kind string `json:"kind"`
	// Got is the rank's value (its region's time in ms, or its pageable
	// share), PeerMedian its peers', Threshold the limit it passed (a ratio
	// of times, or points of share).
	Got        float64 `json:"got"`
	PeerMedian float64 `json:"peerMedian"`
	Threshold  float64 `json:"threshold"`
	// GPU and PeerGPU, on a rank slower than its peers, are its GPU and
	// the one most of its peers ran on, where none of them ran on its
	// own: another GPU may be why it is slower. Empty otherwise.
	GPU     string `json:"gpu,omitempty"`
	PeerGPU string `json:"peerGpu,omitempty"`
}

// Summary is the job's table: a row per rank, in rank order, and the
// ranks that stand out.
type Summary struct {
	Thresholds Thresholds `json:"thresholds"`
	// Region is the region the rows' times are of: the judged region
	// (audit.Audit.Judged) that holds the most time over the ranks (its
	// time times its instances), the whole capture where no rank has an
	// NVTX range with copies.
	Region   string    `json:"region"`
	Rows     []Row     `json:"rows"`
	Findings []Finding `json:"findings"`
	// Unlike are the ranks whose capture is not of the job's program, the
	// one most ranks run (audit.SameProgram): their rows compare different
	// work, and their peers are only ranks of their own program.
	Unlike []Unlike `json:"unlike,omitempty"`
	// OtherRun are the ranks of the job's program whose capture was made
	// in another run of the job than the job's first rank's (their
	// sessions lie more than MaxRunGapNs apart): compared only with ranks
	// of their own run, as a rank of another program is.
	OtherRun []OtherRun `json:"otherRun,omitempty"`
	// BadStart are the ranks whose capture records a session start no
	// session can have (audit.Audit.SessionStartFault): they cannot be
	// told to be of the job's run or of another, so they are said, in
	// rank order. A capture that records no start at all (a CSV folder,
	// an audit's JSON written before it carried one) is not among them.
	BadStart []BadStart `json:"badSessionStart,omitempty"`
}

// BadStart is a rank whose capture's session start cannot be a real one,
// and why (Fault).
type BadStart struct {
	Rank    string `json:"rank"`
	Capture string `json:"capture"`
	Fault   string `json:"fault"`
}

// MaxRunGapNs is how far apart in wall-clock time two ranks' captures may
// lie, the one's end to the other's start, and still be of one run of a
// job: its ranks start together, within seconds of each other.
const MaxRunGapNs = 60_000_000_000

// OtherRun is a rank whose capture was made in another run of the job
// than the capture of the job's first audited rank (Peer): GapNs lie
// between the one's end and the other's start (0 where they overlap);
// StartNs and PeerStartNs are when their sessions started (ns since 1970,
// UTC; 0 where a capture records none).
type OtherRun struct {
	Rank        string `json:"rank"`
	Capture     string `json:"capture"`
	Peer        string `json:"peer"`
	PeerCapture string `json:"peerCapture"`
	GapNs       int64  `json:"gapNs"`
	StartNs     int64  `json:"startNs"`
	PeerStartNs int64  `json:"peerStartNs"`
	// Job and PeerJob are the jobs the two captures name where they name
	// two (audit.Audit.Job): another run of the job, whenever it started.
	Job     string `json:"job,omitempty"`
	PeerJob string `json:"peerJob,omitempty"`
}

// runGap is the wall-clock time between two captures, the earlier one's
// end to the later one's start: at most 0 where they overlap, 0 where
// either does not say when its session started.
func runGap(a, b *audit.Audit) int64 {
	if a.SessionStartNs <= 0 || b.SessionStartNs <= 0 {
		return 0
	}
	return max(a.SessionStartNs, b.SessionStartNs) - min(sessionEnd(a), sessionEnd(b))
}

// badStarts lists the audited ranks whose capture's session start cannot
// be a real one, in rank order.
func badStarts(in []Audited) []BadStart {
	var out []BadStart
	for _, a := range in {
		if a.Audit != nil && a.Audit.SessionStartFault != "" {
			out = append(out, BadStart{Rank: RankOf(a.Capture), Capture: a.Capture, Fault: a.Audit.SessionStartFault})
		}
	}
	slices.SortStableFunc(out, func(a, b BadStart) int { return compareRanks(a.Rank, b.Rank) })
	return out
}

// sessionEnd is when a capture's session ended (its start and span), at
// most the largest time an int64 holds: a start edited near it (the year
// 2262) must not wrap round to before 1970 and so lie beside every run.
func sessionEnd(a *audit.Audit) int64 {
	if end := a.SessionStartNs + max(a.SpanNs, 0); end >= a.SessionStartNs {
		return end
	}
	return math.MaxInt64
}

// sameRun says whether two captures may be of one run of a job: their
// sessions lie within MaxRunGapNs of each other, and they name no two jobs.
func sameRun(a, b *audit.Audit) bool {
	return runGap(a, b) <= MaxRunGapNs && !otherJob(a, b)
}

// otherJob says whether two captures name two jobs (audit.Audit.Job).
func otherJob(a, b *audit.Audit) bool { return a.Job != "" && b.Job != "" && a.Job != b.Job }

// Unlike is a rank whose capture is not of the program of the first
// audited rank (Peer): what differs between the two.
type Unlike struct {
	Rank        string `json:"rank"`
	Capture     string `json:"capture"`
	Peer        string `json:"peer"`
	PeerCapture string `json:"peerCapture"`
	Differences []audit.Difference
}

// differenceJSON is an audit.Difference as the JSON writes it (the domain
// type carries no JSON of its own).
type differenceJSON struct {
	What        string         `json:"what"`
	Direction   vocab.CopyKind `json:"direction,omitempty"`
	Before      int64          `json:"before"`
	After       int64          `json:"after"`
	Share       float64        `json:"share"`
	Moved       int64          `json:"moved,omitempty"`
	OnlyBefore  []string       `json:"onlyBefore,omitempty"`
	OnlyAfter   []string       `json:"onlyAfter,omitempty"`
	NamesBefore int            `json:"namesBefore,omitempty"`
	NamesAfter  int            `json:"namesAfter,omitempty"`
}

// unlikeJSON is Unlike as the JSON writes it.
type unlikeJSON struct {
	Rank        string           `json:"rank"`
	Capture     string           `json:"capture"`
	Peer        string           `json:"peer"`
	PeerCapture string           `json:"peerCapture"`
	Differences []differenceJSON `json:"differences"`
}

// MarshalJSON writes the rank and its differences through their transfer
// types.
func (u Unlike) MarshalJSON() ([]byte, error) {
	j := unlikeJSON{Rank: u.Rank, Capture: u.Capture, Peer: u.Peer, PeerCapture: u.PeerCapture, Differences: []differenceJSON{}}
	for _, d := range u.Differences {
		j.Differences = append(j.Differences, differenceJSON(d))
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (u *Unlike) UnmarshalJSON(b []byte) error {
	var j unlikeJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*u = Unlike{Rank: j.Rank, Capture: j.Capture, Peer: j.Peer, PeerCapture: j.PeerCapture}
	for _, d := range j.Differences {
		u.Differences = append(u.Differences, audit.Difference(d))
	}
	return nil
}

// Audited is one rank's capture and its audit, or why it has none.
type Audited struct {
	Capture string
	Audit   *audit.Audit
	Err     error
}

// Summarize sets the ranks' audits side by side, the rows in rank order,
// and compares each with its peers: the other ranks audited whose capture
// is of its program (audit.SameProgram). A rank of another program than
// the job's (Summary.Unlike) is compared only with ranks of its own
// program, so work of another kind neither stands out nor moves the
// medians the job's ranks are held to.
func Summarize(in []Audited, th Thresholds) Summary {
	s := Summary{Thresholds: th, Region: regionOf(in), Rows: []Row{}, Findings: []Finding{}}
	group, groups := programs(in)
	type indexed struct {
		row   Row
		group int
	}
	rows := make([]indexed, 0, len(in))
	for i, a := range in {
		rows = append(rows, indexed{rowOf(a, s.Region), group[i]})
	}
	s.Unlike, s.OtherRun = unlike(in, group, groups)
	s.BadStart = badStarts(in)
	slices.SortStableFunc(rows, func(a, b indexed) int { return compareRanks(a.row.Rank, b.row.Rank) })
	for _, r := range rows {
		s.Rows = append(s.Rows, r.row)
	}
	for i := range s.Rows {
		r := &s.Rows[i]
		if r.Err != "" {
			continue
		}
		var now, pageable []float64
		for j, p := range s.Rows {
			if j == i || p.Err != "" || rows[j].group != rows[i].group {
				continue
			}
			r.Peers++
			if p.NowMs > 0 {
				now = append(now, p.NowMs)
			}
			pageable = append(pageable, p.Pageable)
		}
		r.PeerNowMs, r.PeerPageable = fleet.Median(now), fleet.Median(pageable)
	}
	for i := range s.Rows {
		r := &s.Rows[i]
		if r.Err != "" || r.Peers == 0 {
			continue
		}
		if r.NowMs > 0 && r.PeerNowMs > 0 && r.NowMs > th.SlowerThanPeers*r.PeerNowMs {
			f := Finding{Row: i, Rank: r.Rank, Kind: KindSlower, Got: r.NowMs, PeerMedian: r.PeerNowMs, Threshold: th.SlowerThanPeers}
			if peer := peerGPU(s.Rows, i, func(j int) bool { return rows[j].group == rows[i].group }); r.GPU != "" && peer != "" {
				f.GPU, f.PeerGPU = r.GPU, peer
			}
			s.Findings = append(s.Findings, f)
			r.Outlier = true
		}
		if r.Pageable > r.PeerPageable+th.PageableAbovePeers {
			s.Findings = append(s.Findings, Finding{Row: i, Rank: r.Rank, Kind: KindPageable, Got: r.Pageable, PeerMedian: r.PeerPageable, Threshold: th.PageableAbovePeers})
			r.Outlier = true
		}
	}
	return s
}

// peerGPU is the GPU most of row i's peers (the other audited rows that
// peer says are) ran on, the first in row order of two as common; "" where
// one of them ran on row i's own GPU, or none names one.
func peerGPU(rows []Row, i int, peer func(j int) bool) string {
	count := map[string]int{}
	best := ""
	for j, p := range rows {
		if j == i || p.Err != "" || p.GPU == "" || !peer(j) {
			continue
		}
		if p.GPU == rows[i].GPU {
			return ""
		}
		if count[p.GPU]++; count[p.GPU] > count[best] {
			best = p.GPU
		}
	}
	return best
}

// rowOf is one rank's row, its times those of the region named.
func rowOf(a Audited, region string) Row {
	r := Row{Rank: RankOf(a.Capture), Capture: a.Capture}
	if a.Err != nil || a.Audit == nil {
		r.Err = "not audited"
		if a.Err != nil {
			r.Err = a.Err.Error()
		}
		return r
	}
	au := a.Audit
	r.Copies, r.GPU = au.Copies, au.GPU
	var hd, pg int64
	for _, t := range au.Totals {
		if t.Direction == vocab.CopyHtoD || t.Direction == vocab.CopyDtoH {
			hd += t.Count
			if t.HostMemory == audit.Pageable {
				pg += t.Count
			}
		}
	}
	if hd > 0 {
		r.Pageable = float64(pg) / float64(hd)
	}
	if au.Prediction != nil {
		r.SavedNs = au.Prediction.SavedNs
	}
	if g := au.Region(region); g != nil {
		r.Region, r.NowMs = region, g.Time()
		r.PinnedMs, _, _ = g.Predicted()
		if r.NowMs > 0 {
			r.Saving = 1 - r.PinnedMs/r.NowMs
		}
	}
	return r
}

// regionOf chooses the region the rows' times are of: the judged region
// that holds the most time over the ranks, its time (in its measure) times
// its instances (first in name order of two as long).
func regionOf(in []Audited) string {
	total := map[string]float64{}
	for _, a := range in {
		if a.Audit == nil {
			continue
		}
		for _, g := range a.Audit.Judged() {
			total[g.Name] += g.Time() * float64(max(g.Instances, 1))
		}
	}
	best := ""
	for name, t := range total {
		if best == "" || t > total[best] || t == total[best] && name < best {
			best = name
		}
	}
	return best
}

// rankNumber finds the runs of digits in a capture's base name;
// rankWord a number right after the word rank (rank3, rank-3, RANK_3).
var (
	rankNumber = regexp.MustCompile(`[0-9]+`)
	rankWord   = regexp.MustCompile(`(?i)rank[._-]?([0-9]+)`)
)

// RankRule says, in words, how RankOf reads a rank from a name.
const RankRule = `a capture's rank is the number right after "rank" in its file's name, as 3 in rank3-v2.sqlite, else the last number in it, as 17 in report.17.nsys-rep, else the name`

// RankOf names a capture's rank, the number nsys's %q{RANK} puts in its
// file's name without its extensions (RankRule): the number right after
// the word rank (rank0-v2.sqlite, job_rank_3.sqlite), else the last
// number (report.17.nsys-rep, shard-2.json, out/node3/), else that name.
func RankOf(capture string) string {
	r, _ := rankFrom(capture)
	return r
}

// RankPlain says whether a capture's name gives its rank without a
// choice: it holds one number, and that is the rank. Where a name holds
// several numbers, or none, which file gave which rank is worth saying.
func RankPlain(capture string) bool {
	_, plain := rankFrom(capture)
	return plain
}

// rankFrom is RankOf, and whether the name held one number alone.
func rankFrom(capture string) (rank string, plain bool) {
	base := filepath.Base(filepath.Clean(capture))
	for _, ext := range []string{".nsyscheck.sqlite", ".sqlite", ".nsys-rep", ".qdrep", ".json"} {
		if strings.HasSuffix(strings.ToLower(base), ext) {
			base = base[:len(base)-len(ext)]
			break
		}
	}
	numbers := rankNumber.FindAllString(base, -1)
	var n string
	if m := rankWord.FindAllStringSubmatch(base, -1); len(m) > 0 {
		n = m[len(m)-1][1]
	} else if len(numbers) > 0 {
		n = numbers[len(numbers)-1]
	} else {
		return base, false
	}
	if n = strings.TrimLeft(n, "0"); n == "" {
		n = "0"
	}
	return n, len(numbers) == 1
}

// compareRanks orders ranks by number where both are numbers, numbers
// first, else by name.
func compareRanks(a, b string) int {
	x, ea := strconv.Atoi(a)
	y, eb := strconv.Atoi(b)
	switch {
	case ea == nil && eb == nil:
		return cmp.Compare(x, y)
	case ea == nil:
		return -1
	case eb == nil:
		return 1
	}
	return cmp.Compare(a, b)
}

// programs groups the audited ranks by program (audit.SameProgram against
// each group's first rank, in rank order): group[i] is in[i]'s group, -1
// for a rank not audited; groups[g] the index in in of group g's first
// rank. Group 0 is the job's program: the one most ranks run (of two as
// many, the one of the lowest rank).
func programs(in []Audited) (group []int, groups []int) {
	order := make([]int, 0, len(in))
	group = make([]int, len(in))
	for i, a := range in {
		group[i] = -1
		if a.Err == nil && a.Audit != nil {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(x, y int) int { return compareRanks(RankOf(in[x].Capture), RankOf(in[y].Capture)) })
	var size []int
	for _, i := range order {
		g := slices.IndexFunc(groups, func(first int) bool {
			return audit.SameProgram(in[first].Audit, in[i].Audit) == nil && sameRun(in[first].Audit, in[i].Audit)
		})
		if g < 0 {
			g = len(groups)
			groups, size = append(groups, i), append(size, 0)
		}
		group[i] = g
		size[g]++
	}
	job := 0
	for g := range size {
		if size[g] > size[job] {
			job = g
		}
	}
	if job != 0 {
		groups[0], groups[job] = groups[job], groups[0]
		for i, g := range group {
			switch g {
			case 0:
				group[i] = job
			case job:
				group[i] = 0
			}
		}
	}
	return group, groups
}

// unlike lists the audited ranks not of the job's program (group 0 of
// programs), each beside the job's first rank, in rank order; and those
// of its program captured in another run of the job.
func unlike(in []Audited, group, groups []int) ([]Unlike, []OtherRun) {
	if len(groups) == 0 {
		return nil, nil
	}
	ref := in[groups[0]]
	idx := make([]int, 0, len(in))
	for i, g := range group {
		if g > 0 {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(x, y int) int { return compareRanks(RankOf(in[x].Capture), RankOf(in[y].Capture)) })
	var out []Unlike
	var runs []OtherRun
	for _, i := range idx {
		a := in[i]
		var e *audit.NotSameProgram
		if !errors.As(audit.SameProgram(ref.Audit, a.Audit), &e) {
			if !sameRun(ref.Audit, a.Audit) {
				o := OtherRun{Rank: RankOf(a.Capture), Capture: a.Capture, Peer: RankOf(ref.Capture), PeerCapture: ref.Capture,
					GapNs: max(runGap(ref.Audit, a.Audit), 0), StartNs: a.Audit.SessionStartNs, PeerStartNs: ref.Audit.SessionStartNs}
				if otherJob(ref.Audit, a.Audit) {
					o.Job, o.PeerJob = a.Audit.Job, ref.Audit.Job
				}
				runs = append(runs, o)
			}
			continue
		}
		for k := range e.Differences {
			if math.IsInf(e.Differences[k].Share, 0) {
				e.Differences[k].Share = 0 // the peer moved none: no share of nothing (JSON holds no infinity)
			}
		}
		out = append(out, Unlike{Rank: RankOf(a.Capture), Capture: a.Capture, Peer: RankOf(ref.Capture), PeerCapture: ref.Capture, Differences: e.Differences})
	}
	return out, runs
}
