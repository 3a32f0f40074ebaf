// Package fleet sets the pinned-copy bandwidth of many GPUs side by side —
// one machine's GPUs or a cluster's — against each GPU's rated PCIe link and
// against its peers (the other GPUs of the same model), and names the GPUs
// that fall well below either. It computes only: check builds its entries
// from run folders and report renders the table.
package fleet

import (
	"sort"

	"github.com/nsyscheck/nsyscheck/diag"
)

// Entry is one GPU's run: where it ran and what its pinned copies measured.
type Entry struct {
	// Name identifies the run (its folder).
	Name string `json:"name"`
	Host string `json:"host,omitempty"`
	// GPU is the index of the GPU on its machine, -1 when unknown.
	GPU   int    `json:"gpu"`
	Model string `json:"model,omitempty"`
	BusID string `json:"busId,omitempty"`
	// NUMANode is the GPU's NUMA node (-1 unknown); Binding how the
	// program was bound to it.
	NUMANode int    `json:"numaNode"`
	Binding  string `json:"binding,omitempty"`
	// Link is the PCIe link; RatedGBps its rated bandwidth per direction
	// (0 unknown).
	Link      Link    `json:"-"`
	RatedGBps float64 `json:"ratedGBps,omitempty"`
	// H2DGBps and D2HGBps are the measured pinned bandwidths at the largest
	// size (0 unknown); From says whose numbers they are (trace or program).
	H2DGBps float64 `json:"h2dGBps,omitempty"`
	D2HGBps float64 `json:"d2hGBps,omitempty"`
	From    string  `json:"from,omitempty"`
	// Shared is true when other work used the GPU around the profile.
	Shared bool `json:"shared,omitempty"`
	// Held of Predictions held; Predictions 0 where none were judged.
	Held, Predictions int `json:"-"`
}

// Link is a GPU's PCIe link: its generation and width, and where the link
// was seen running below them, what it ran at (0 where it ran at them).
type Link struct {
	Gen, Width         int
	SeenGen, SeenWidth int
}

// Thresholds decide which GPUs are outliers.
type Thresholds struct {
	// BelowRated flags a GPU whose measured pinned bandwidth in a direction
	// is under this share of its rated link (e.g. 0.70).
	BelowRated float64 `json:"belowRated"`
	// BelowPeers flags a GPU under this share of the median of its peers
	// (the other GPUs of the same model) in a direction (e.g. 0.85).
	BelowPeers float64 `json:"belowPeers"`
}

// DefaultThresholds: a healthy PCIe Gen4/Gen5 x16 link carries 80-90% of its
// rated bandwidth in pinned copies; a link trained down one generation or to
// half its width carries about half.
var DefaultThresholds = Thresholds{BelowRated: 0.70, BelowPeers: 0.85}

// Row is an entry with its efficiencies and its peers' medians.
type Row struct {
	Entry
	// H2DShare and D2HShare are measured / rated (0 unknown).
	H2DShare float64 `json:"h2dShare,omitempty"`
	D2HShare float64 `json:"d2hShare,omitempty"`
	// PeerH2D and PeerD2H are the medians of the peers (0 without peers).
	PeerH2D float64 `json:"peerH2DGBps,omitempty"`
	PeerD2H float64 `json:"peerD2HGBps,omitempty"`
	Peers   int     `json:"peers"`
	// Outlier is true when a finding names this GPU.
	Outlier bool `json:"outlier"`
}

// CodeOutlier marks a GPU that falls well below its link or its peers.
const CodeOutlier diag.Code = "fleet-outlier"

// Finding is one GPU falling well below its link or its peers; it is the
// detail of the fleet-outlier diagnostic of the GPU's verdicts.
type Finding struct {
	// Row is the index of the row (and entry) the finding names.
	Row  int    `json:"row"`
	Name string `json:"name"`
	// Kind is "below-rated" or "below-peers".
	Kind      string `json:"kind"`
	Direction string `json:"direction"` // h2d or d2h
	// GPU is the row's GPU index, -1 unknown.
	GPU int `json:"-"`
	// Got is the pinned bandwidth measured in Direction; Share it against
	// the rating (below-rated) or the peers' median (below-peers), under
	// Threshold.
	Got, Share, Threshold float64 `json:"-"`
	// Link and RatedGBps are the row's link (below-rated); PeerMedian,
	// Peers and Model its peers (below-peers).
	Link       Link    `json:"-"`
	RatedGBps  float64 `json:"-"`
	PeerMedian float64 `json:"-"`
	Peers      int     `json:"-"`
	Model      string  `json:"-"`
	// Cause is what most likely explains it.
	Cause Cause `json:"-"`
}

// Cause is what most likely explains a slow GPU.
type Cause int

// Causes.
const (
	// CauseShared: other work used the GPU during the run.
	CauseShared Cause = iota + 1
	// CauseLinkOrNUMA: the link trained down, or host memory on a remote
	// NUMA node (the program was not bound).
	CauseLinkOrNUMA
	// CauseLink: the link trained down.
	CauseLink
)

// Code is the finding's diagnostic code.
func (Finding) Code() diag.Code { return CodeOutlier }

// Summary is the fleet table and its findings.
type Summary struct {
	Thresholds Thresholds `json:"thresholds"`
	Rows       []Row      `json:"rows"`
	Findings   []Finding  `json:"findings"`
}

// Summarize compares every entry with its rated link and its peers.
func Summarize(entries []Entry, th Thresholds) Summary {
	s := Summary{Thresholds: th, Rows: make([]Row, len(entries)), Findings: []Finding{}}
	for i, e := range entries {
		row := Row{Entry: e}
		if e.RatedGBps > 0 {
			row.H2DShare = e.H2DGBps / e.RatedGBps
			row.D2HShare = e.D2HGBps / e.RatedGBps
		}
		var h2d, d2h []float64
		for j, p := range entries {
			if j == i || p.Model != e.Model {
				continue
			}
			row.Peers++
			if p.H2DGBps > 0 {
				h2d = append(h2d, p.H2DGBps)
			}
			if p.D2HGBps > 0 {
				d2h = append(d2h, p.D2HGBps)
			}
		}
		row.PeerH2D, row.PeerD2H = Median(h2d), Median(d2h)
		s.Rows[i] = row
	}
	for i := range s.Rows {
		r := &s.Rows[i]
		for _, d := range []struct {
			dir                 string
			got, share, peerMed float64
		}{
			{"h2d", r.H2DGBps, r.H2DShare, r.PeerH2D},
			{"d2h", r.D2HGBps, r.D2HShare, r.PeerD2H},
		} {
			if d.got == 0 {
				continue
			}
			f := Finding{Row: i, Name: r.Name, Direction: d.dir, GPU: r.GPU, Got: d.got, Cause: causeOf(r.Entry)}
			if r.RatedGBps > 0 && d.share < th.BelowRated {
				rated := f
				rated.Kind, rated.Share, rated.Threshold, rated.Link, rated.RatedGBps = "below-rated", d.share, th.BelowRated, r.Link, r.RatedGBps
				s.Findings = append(s.Findings, rated)
				r.Outlier = true
			}
			if d.peerMed > 0 && d.got < th.BelowPeers*d.peerMed {
				peers := f
				peers.Kind, peers.Share, peers.Threshold = "below-peers", d.got/d.peerMed, th.BelowPeers
				peers.PeerMedian, peers.Peers, peers.Model = d.peerMed, r.Peers, r.Model
				s.Findings = append(s.Findings, peers)
				r.Outlier = true
			}
		}
	}
	return s
}

// causeOf names what most likely explains a slow GPU: other work on it when
// the run saw some, else the link or where the host memory lay.
func causeOf(e Entry) Cause {
	if e.Shared {
		return CauseShared
	}
	if e.Binding == "" || e.Binding == "none" {
		return CauseLinkOrNUMA
	}
	return CauseLink
}

// Median is the median of v (the mean of the two middle values for an
// even count), 0 for none; v is not changed. Peers are compared with it.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = append([]float64(nil), v...)
	sort.Float64s(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}
