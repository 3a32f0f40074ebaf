package audit

import (
	"cmp"
	"math"
	"slices"

	"github.com/nsyscheck/nsyscheck/replay"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// Rates are pinned-copy rates measured outside the capture: a run of the
// lesson's program on the same machine (`nsyscheck run`), and the link.
type Rates struct {
	// Source says where they come from, e.g. the run folder.
	Source string
	// Copies are pinned copies timed by the program, by direction and size.
	Copies []RatePoint
	// AsyncCallNs is the time a pinned cudaMemcpyAsync call held the host,
	// 0 when not measured.
	AsyncCallNs float64
	// LinkGBps is the host-device link's rate in GB/s (1e9 bytes/s);
	// Link says where it comes from.
	LinkGBps float64
	Link     LinkOrigin
	// GPU is the GPU the run folder's rates were measured on, "" where
	// they come from no run or it names none: the audit refuses a capture
	// of another GPU (its copies cross another link).
	GPU string
}

// LinkOrigin says where a link's rate came from: assumed (the usual link
// of the capture's GPU, else PCIe 5.0 x16: no input gave it), given with
// --link-gbps, or the rated link of a run folder's GPU (its run.json).
type LinkOrigin struct {
	Kind LinkKind
	// Gen and Width are the PCIe link's generation and lanes (assumed, or
	// the run's), 0 for a link of another kind, which Name names
	// (NVLink-C2C); GPU names the run's GPU and File its run.json.
	Gen, Width int
	Name       string
	GPU, File  string
	// GBps is the rate it gives.
	GBps float64
}

// LinkKind is how a link's rate was had.
type LinkKind int

// How a link's rate was had.
const (
	LinkAssumed LinkKind = iota // no run folder or flag gave it
	LinkFlag                    // --link-gbps
	LinkRun                     // a --rates run folder's run.json
)

// FromLink is what the replay's costs name as where a cost of the link's
// rate came from (replay.CostUse.GPUFrom, GroupPrediction.From):
// Audit.Link says where, typed.
const FromLink = "link"

// RatePoint is one timed pinned copy size, as the replay's rate coster
// takes it.
type RatePoint = replay.RatePoint

// Rate sources, best first, as the replay names them.
const (
	SourceCapture = replay.SourceCapture // the capture's own pinned copies of similar size
	SourceRun     = replay.SourceRun     // a run of the lesson's program on the same machine
	SourceLink    = replay.SourceLink    // the link rate
	SourceLaunch  = replay.SourceLaunch  // the capture's own kernel launch calls
	SourceMixed   = replay.SourceMixed   // more than one of them within a group
	SourceNone    = "none"               // nothing to predict from
)

// Prediction is what pinning the pageable host-device copies would do to
// the host time their calls hold, on the costs the replay used.
type Prediction struct {
	// Groups predict each pageable direction, API kind and size bucket.
	Groups []GroupPrediction
	// Sources lists the rate sources the groups used.
	Sources []string
	// Pageable copies now and their calls' host time; the host time
	// predicted after pinning (with a low and high bound) and the saving.
	Count       int64
	Bytes       int64
	BeforeNs    int64
	AfterNs     int64
	AfterLowNs  int64
	AfterHighNs int64
	SavedNs     int64
	SavedLowNs  int64
	SavedHighNs int64
	// PinCopyNs is the host time copying the buffers into pinned memory
	// adds at worst (replay.PinByCopy), outside the copy calls.
	PinCopyNs int64
	// HtoD is the same for host-to-device copies alone: all HtoD copy
	// calls now, and predicted after.
	HtoD HtoDPrediction
}

// HtoDPrediction is the host-to-device part of a Prediction.
type HtoDPrediction struct {
	BeforeNs         int64 // every HtoD copy call
	PageableBeforeNs int64
	AfterNs          int64
	AfterLowNs       int64
	AfterHighNs      int64
	Bytes            int64
}

// GroupPrediction is the prediction for the pageable copies of one
// direction, API kind and size bucket: the host time their calls hold now
// and after pinning, from the replay's costs (replay.CostUse).
type GroupPrediction struct {
	Direction   vocab.CopyKind
	APIKind     APIKind
	SizeBucket  string
	Count       int64
	Bytes       int64
	BeforeNs    int64
	AfterNs     int64
	AfterLowNs  int64
	AfterHighNs int64
	// Source is where the call's cost came from (for a blocking call, which
	// still waits for its copy, the copy's too: SourceMixed when they
	// differ); From names the run folder or the link's source of a rate.
	Source string
	From   string
	// Samples is how many of the capture's own pinned calls (copies for a
	// blocking group) the cost came from, 0 for a rate.
	Samples int
	// Uncosted copies found no cost and keep their measured host time.
	Uncosted int
}

// predict turns the replay's costs of the pageable host-device copies
// into the host time their calls hold after pinning: an async call holds
// its thread for the pinned call's time, a blocking one for that and its
// pinned copy; a copy without a cost keeps its measured time.
func predict(au *Audit, costs []replay.CostUse) *Prediction {
	p := &Prediction{Groups: []GroupPrediction{}, Sources: []string{}}
	sources := map[string]bool{}
	for _, c := range costs {
		if !hostDevice(c.Direction) {
			continue
		}
		g := GroupPrediction{Direction: c.Direction, APIKind: Blocking, SizeBucket: c.SizeClass, Count: int64(c.Copies),
			Bytes: c.Bytes, BeforeNs: c.CallNs, Source: c.CallSource, From: c.CallFrom, Samples: c.CallSamples, Uncosted: c.Uncosted}
		after := c.PinnedCallNs
		if c.Async {
			g.APIKind = Async
		} else {
			after = after.Add(c.PinnedGPUNs)
			g.Samples = c.Samples
			if c.GPUSource != c.CallSource {
				g.Source = SourceMixed
			}
			if g.From == "" {
				g.From = c.GPUFrom
			}
		}
		if g.Source == "" {
			g.Source = SourceNone
		}
		kept := float64(c.UncostedCallNs)
		g.AfterNs, g.AfterLowNs, g.AfterHighNs = round(after.Mid+kept), round(after.Low+kept), round(after.High+kept)
		sources[g.Source] = true
		p.Groups = append(p.Groups, g)
		p.add(g)
		p.PinCopyNs += c.PinCopyNs
	}
	slices.SortStableFunc(p.Groups, func(x, y GroupPrediction) int {
		return cmp.Or(-cmp.Compare(x.Direction, y.Direction), cmp.Compare(x.APIKind, y.APIKind), cmp.Compare(BucketIndex(x.SizeBucket), BucketIndex(y.SizeBucket)))
	})
	for _, s := range []string{SourceCapture, SourceRun, SourceLink, SourceLaunch, SourceMixed, SourceNone} {
		if sources[s] {
			p.Sources = append(p.Sources, s)
		}
	}
	p.SavedNs = p.BeforeNs - p.AfterNs
	p.SavedLowNs = p.BeforeNs - p.AfterHighNs
	p.SavedHighNs = p.BeforeNs - p.AfterLowNs
	all := au.Sum(vocab.CopyHtoD, "", "")
	p.HtoD.BeforeNs, p.HtoD.Bytes = all.HostNs, all.Bytes
	// The HtoD copies that are not pageable stay as they are.
	rest := all.HostNs - p.HtoD.PageableBeforeNs
	p.HtoD.AfterNs += rest
	p.HtoD.AfterLowNs += rest
	p.HtoD.AfterHighNs += rest
	return p
}

// add counts group g into the prediction's totals: its copies, bytes and
// host time before and after, and, for a host-to-device group, the
// host-to-device share of them.
func (p *Prediction) add(g GroupPrediction) {
	p.Count += g.Count
	p.Bytes += g.Bytes
	p.BeforeNs += g.BeforeNs
	p.AfterNs += g.AfterNs
	p.AfterLowNs += g.AfterLowNs
	p.AfterHighNs += g.AfterHighNs
	if g.Direction == vocab.CopyHtoD {
		p.HtoD.PageableBeforeNs += g.BeforeNs
		p.HtoD.AfterNs += g.AfterNs
		p.HtoD.AfterLowNs += g.AfterLowNs
		p.HtoD.AfterHighNs += g.AfterHighNs
	}
}

// BucketIndex is the index in Buckets of a bucket's name, -1 for none.
func BucketIndex(name string) int {
	for i, b := range Buckets {
		if b.Name == name {
			return i
		}
	}
	return -1
}

func round(v float64) int64 { return int64(math.Round(v)) }

// Unpredicted reports whether the prediction holds pageable copies of
// direction dir (every host-device direction for "") and found a pinned
// cost for none of them: their host time after is then the time as
// measured, kept, no prediction.
func (p *Prediction) Unpredicted(dir vocab.CopyKind) bool {
	if p == nil {
		return false
	}
	var copies, uncosted int64
	for _, g := range p.Groups {
		if dir == "" || g.Direction == dir {
			copies += g.Count
			uncosted += int64(g.Uncosted)
		}
	}
	return copies > 0 && uncosted == copies
}
