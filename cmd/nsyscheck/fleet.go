package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/nsyscheck/nsyscheck/fleet"
	"github.com/nsyscheck/nsyscheck/predictions"
	"github.com/nsyscheck/nsyscheck/runner"
)

// codeFleet marks a GPU that falls well below its link or its peers.
const codeFleet = "fleet-outlier"

// runInfoOf reads the run.json of the run folder a result was read from;
// nil when the input is not a run folder.
func runInfoOf(r *predictions.Result) *runner.Info {
	data, err := os.ReadFile(filepath.Join(runDirOf(r), runner.InfoFile))
	if err != nil {
		return nil
	}
	var info runner.Info
	if json.Unmarshal(data, &info) != nil || info.GPU == nil {
		return nil
	}
	return &info
}

// runDirOf is the folder a result's input lies in (the input itself when
// it is a folder).
func runDirOf(r *predictions.Result) string {
	dir := r.Input.Path
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		dir = filepath.Dir(dir)
	}
	return dir
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

// fleetEntry describes one result for the fleet table: the GPU from the
// run.json beside it and the pinned bandwidths at the largest size the
// result has, the trace's where it has them.
func fleetEntry(r *predictions.Result, info *runner.Info) fleet.Entry {
	e := fleet.Entry{Name: runName(runDirOf(r)), GPU: -1, NUMANode: -1, Model: r.Input.GPU}
	if info != nil {
		g := info.GPU
		e.Host, e.GPU, e.Model, e.BusID = info.Host, g.Index, g.Name, g.BusID
		if g.NUMA != nil {
			e.NUMANode, e.Binding = g.NUMA.Node, g.NUMA.Binding
		}
		if g.PCIe.GenMax > 0 {
			e.Link = fmt.Sprintf("Gen%d x%d", g.PCIe.GenMax, g.PCIe.WidthMax)
			if g.PCIe.GenCurrent != g.PCIe.GenMax || g.PCIe.WidthCurrent != g.PCIe.WidthMax {
				e.Link += fmt.Sprintf(" (seen Gen%d x%d)", g.PCIe.GenCurrent, g.PCIe.WidthCurrent)
			}
		}
		e.RatedGBps = g.PCIe.RatedGBps
		e.Shared = info.Sharing != nil && info.Sharing.Foreign
	}
	var largest int64
	for _, row := range r.Copies {
		if row.Source == "pinned" && row.Bytes > largest {
			largest = row.Bytes
		}
	}
	for _, dir := range []string{"h2d", "d2h"} {
		got, from := 0.0, ""
		for _, row := range r.Copies {
			if row.Direction == dir && row.Source == "pinned" && row.Bytes == largest && (got == 0 || row.From == predictions.SourceTrace) {
				got, from = row.GBps, row.From
			}
		}
		if dir == "h2d" {
			e.H2DGBps = got
		} else {
			e.D2HGBps = got
		}
		if from != "" {
			e.From = from
		}
	}
	held := 0
	for _, p := range r.Predictions {
		if p.Verdict == predictions.Held {
			held++
		}
	}
	e.Verdicts = fmt.Sprintf("%d/%d held", held, len(r.Predictions))
	return e
}

// attachFleet sets the results that come from run folders side by side
// when there are at least two: it returns the fleet summary and adds a
// fleet-outlier warning to every result a finding names. It returns nil
// with fewer than two run folders.
func attachFleet(results []*predictions.Result) *fleet.Summary {
	var entries []fleet.Entry
	var of []*predictions.Result
	for _, r := range results {
		if info := runInfoOf(r); info != nil {
			entries = append(entries, fleetEntry(r, info))
			of = append(of, r)
		}
	}
	if len(entries) < 2 {
		return nil
	}
	s := fleet.Summarize(entries, fleet.DefaultThresholds)
	for _, f := range s.Findings {
		addDiag(of[f.Row], codeFleet, predictions.Warning, f.Message)
	}
	return &s
}

// fleetFile is the fleet table report writes beside the per-input reports.
const fleetFile = "fleet.md"

// writeFleet prints the fleet table after the verdicts in text and
// Markdown; JSON carries its findings as fleet-outlier diagnostics.
func writeFleet(w io.Writer, format string, s *fleet.Summary) error {
	if s == nil {
		return nil
	}
	switch format {
	case "text":
		fmt.Fprintln(w)
		return s.WriteText(w)
	case "markdown":
		fmt.Fprintln(w)
		return s.WriteMarkdown(w)
	}
	return nil
}

// writeFleetFile writes fleet.md into dir (replacing one only with force).
func writeFleetFile(dir string, s *fleet.Summary, force bool) (string, error) {
	var b bytes.Buffer
	b.WriteString("# Fleet\n\n")
	if err := s.WriteMarkdown(&b); err != nil {
		return "", err
	}
	path := filepath.Join(dir, fleetFile)
	if force {
		return path, os.WriteFile(path, b.Bytes(), 0o644)
	}
	return path, writeNew(path, b.Bytes())
}
