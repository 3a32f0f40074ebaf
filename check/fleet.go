package check

import (
	"path/filepath"

	"github.com/nsyscheck/nsyscheck/diag"

	"github.com/nsyscheck/nsyscheck/fleet"
	"github.com/nsyscheck/nsyscheck/predictions"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// Fleet sets the checked inputs that come from run folders (a run.json
// naming the GPU) side by side: it returns the fleet summary and adds a
// fleet-outlier warning to every result a finding names. It returns nil
// with fewer than atLeast such inputs (verify and report ask for two; run
// --gpu all for one, since its summary is written whatever the count).
func Fleet(ks []*Checked, atLeast int) *fleet.Summary {
	var entries []fleet.Entry
	var of []*predictions.Result
	for _, k := range ks {
		if k.Run != nil && k.Run.GPU != nil {
			entries = append(entries, fleetEntry(k))
			of = append(of, k.Result)
		}
	}
	if len(entries) == 0 || len(entries) < atLeast {
		return nil
	}
	s := fleet.Summarize(entries, fleet.DefaultThresholds)
	for _, f := range s.Findings {
		addDiag(of[f.Row], diag.Warning, f)
	}
	return &s
}

// fleetEntry describes one run folder for the fleet table: the GPU from its
// run.json and the pinned bandwidths at the largest size the result has,
// the trace's where it has them.
func fleetEntry(k *Checked) fleet.Entry {
	r, info := k.Result, k.Run
	e := fleet.Entry{Name: runName(folderOf(r.Input.Path)), GPU: -1, NUMANode: -1, Model: r.Input.GPU}
	g := info.GPU
	e.Host, e.GPU, e.Model, e.BusID = info.Host, g.Index, g.Name, g.BusID
	if g.NUMA != nil {
		e.NUMANode, e.Binding = g.NUMA.Node, g.NUMA.Binding
	}
	if g.PCIe.GenMax > 0 {
		e.Link = fleet.Link{Gen: g.PCIe.GenMax, Width: g.PCIe.WidthMax}
		if g.PCIe.GenCurrent != g.PCIe.GenMax || g.PCIe.WidthCurrent != g.PCIe.WidthMax {
			e.Link.SeenGen, e.Link.SeenWidth = g.PCIe.GenCurrent, g.PCIe.WidthCurrent
		}
	}
	e.RatedGBps = g.PCIe.RatedGBps
	e.Shared = info.SharedGPU()
	var largest int64
	for _, row := range predictions.CopyRows.Of(r) {
		if row.Source == vocab.MemPinned && row.Bytes > largest {
			largest = row.Bytes
		}
	}
	for _, dir := range []vocab.Direction{vocab.H2D, vocab.D2H} {
		got, from := 0.0, ""
		for _, row := range predictions.CopyRows.Of(r) {
			if row.Direction == dir && row.Source == vocab.MemPinned && row.Bytes == largest && (got == 0 || row.From == predictions.SourceTrace) {
				got, from = row.GBps, string(row.From)
			}
		}
		if dir == vocab.H2D {
			e.H2DGBps = got
		} else {
			e.D2HGBps = got
		}
		if from != "" {
			e.From = from
		}
	}
	for _, p := range r.Predictions {
		if p.Verdict == predictions.Held {
			e.Held++
		}
	}
	e.Predictions = len(r.Predictions)
	return e
}

// runName names a run folder by its last two path elements (e.g.
// node17/gpu0), enough to tell apart the folders of a fleet.
func runName(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	parent := filepath.Base(filepath.Dir(abs))
	if parent == "/" || parent == "." {
		return filepath.Base(abs)
	}
	return parent + "/" + filepath.Base(abs)
}
