package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/predictions"
	"github.com/nsyscheck/nsyscheck/runner"
)

// Diagnostic codes the command line adds beside the predictions' own.
const (
	codeNsysRule = "nsys-analyze"
	codePCIe     = "pcie-link"
	codeResident = "resident-vs-device-copy"
)

func addDiag(r *predictions.Result, code string, level predictions.Level, msg string) {
	r.Diagnostics = append(r.Diagnostics, predictions.Diagnostic{Code: code, Level: level, Message: msg})
}

// attachFolderFacts adds what a capture folder holds beyond the capture:
// NVIDIA's cuda_memcpy_async rule output and, in a run folder, the PCIe link
// from run.json.
func attachFolderFacts(r *predictions.Result, c *capture.Capture) {
	dir := c.Path
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		dir = filepath.Dir(c.Path)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*_"+runner.AnalyzeRule+".csv")); len(m) == 1 {
		if flagged, err := runner.ReadAnalyze(m[0]); err != nil {
			addDiag(r, codeNsysRule, predictions.Warning, err.Error())
		} else {
			compareNsysRule(r, c, flagged, filepath.Base(m[0]))
		}
	}
	if data, err := os.ReadFile(filepath.Join(dir, runner.InfoFile)); err == nil {
		var info runner.Info
		if json.Unmarshal(data, &info) == nil && info.GPU != nil {
			attachPCIe(r, info.GPU.PCIe)
		}
		attachSharing(r, info)
		attachLostTrace(r, c, info, "")
	}
	attachResident(r)
	attachExposure(r, c)
}

// compareNsysRule sets NVIDIA's rule (which lists async copies whose host side
// is pageable) beside nsyscheck's reading of part 2: the pageable group's
// timed calls must all be flagged and none of the pinned group's.
func compareNsysRule(r *predictions.Result, c *capture.Capture, flagged []runner.FlaggedCopy, file string) {
	var groups *predictions.CallDurations
	for i := range r.AsyncCalls {
		if r.AsyncCalls[i].From == predictions.SourceTrace && len(r.AsyncCalls[i].PageableCorrelationIDs) > 0 {
			groups = &r.AsyncCalls[i]
		}
	}
	if groups == nil {
		addDiag(r, codeNsysRule, predictions.Info, fmt.Sprintf(
			"NVIDIA's %s rule (%s) flags %d copies from pageable memory; the trace gave no part 2 groups to compare them with",
			runner.AnalyzeRule, file, len(flagged)))
		return
	}
	// The rule reports each copy by the start of its GPU copy record; a
	// capture without those records (the CSV reports) cannot be matched.
	if len(c.Memcpys) == 0 {
		addDiag(r, codeNsysRule, predictions.Info, fmt.Sprintf(
			"NVIDIA's %s rule (%s) flags %d copies from pageable memory; this input has no GPU memory-copy records to match them with (verify the SQLite export to compare)",
			runner.AnalyzeRule, file, len(flagged)))
		return
	}
	// The rule reports each copy by its start: match it to a call or its copy.
	byStart := map[int64]int64{}
	for _, call := range c.Calls {
		if call.Name == "cudaMemcpyAsync" {
			byStart[call.Start] = call.CorrelationID
		}
	}
	for _, m := range c.Memcpys {
		if _, ok := byStart[m.Start]; !ok {
			byStart[m.Start] = m.CorrelationID
		}
	}
	flaggedIDs := map[int64]bool{}
	unmatched := 0
	for _, f := range flagged {
		if id, ok := byStart[f.Start]; ok {
			flaggedIDs[id] = true
		} else {
			unmatched++
		}
	}
	count := func(ids []int64) int {
		n := 0
		for _, id := range ids {
			if flaggedIDs[id] {
				n++
			}
		}
		return n
	}
	pg, pn := count(groups.PageableCorrelationIDs), count(groups.PinnedCorrelationIDs)
	other := len(flaggedIDs) - pg - pn
	// Copies the rule flags that match no call loaded (other threads or
	// processes, which nsyscheck does not read) neither confirm nor
	// contradict the reading of part 2: they are only counted.
	agrees := pg == len(groups.PageableCorrelationIDs) && pn == 0
	level, verdict := predictions.Info, "agrees with"
	if !agrees {
		level, verdict = predictions.Warning, "disagrees with"
	}
	addDiag(r, codeNsysRule, level, fmt.Sprintf(
		"NVIDIA's %s rule (%s) flags %d copies from pageable memory: %d of the %d timed pageable calls, %d of the %d timed pinned calls, %d other (e.g. warm-ups)%s; it %s nsyscheck's reading of part 2 (the pageable group copies from pageable memory, the pinned group does not)",
		runner.AnalyzeRule, file, len(flagged), pg, len(groups.PageableCorrelationIDs), pn, len(groups.PinnedCorrelationIDs),
		other, unmatchedNote(unmatched), verdict))
}

func unmatchedNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d matching no call of the program's thread", n)
}

// attachPCIe states the link and how close pinned copies at 256 MiB came to
// its rated bandwidth.
func attachPCIe(r *predictions.Result, link runner.PCIe) {
	if link.RatedGBps == 0 {
		return
	}
	var parts []string
	for _, dir := range []string{"h2d", "d2h"} {
		best := 0.0
		for _, row := range r.Copies {
			if row.Direction == dir && row.Source == "pinned" && row.Bytes == 256<<20 && (best == 0 || row.From == predictions.SourceTrace) {
				best = row.GBps
			}
		}
		if best > 0 {
			parts = append(parts, fmt.Sprintf("pinned %s at 256 MiB %.1f GB/s = %.0f%%", strings.ToUpper(dir), best, 100*best/link.RatedGBps))
		}
	}
	msg := fmt.Sprintf("GPU link PCIe Gen%d x%d (now Gen%d x%d), rated %.1f GB/s per direction",
		link.GenMax, link.WidthMax, link.GenCurrent, link.WidthCurrent, link.RatedGBps)
	if len(parts) > 0 {
		msg += ": " + strings.Join(parts, ", ")
	}
	addDiag(r, codePCIe, predictions.Info, msg)
}

// attachResident sets the device-resident kernel's bandwidth beside the
// device-to-device copy bandwidth measured in the same run (prediction 3's
// premise: the resident kernel sits near the card's copy bandwidth).
func attachResident(r *predictions.Result) {
	if r.DeviceCopyGBps == 0 {
		return
	}
	for _, k := range r.Kernels {
		if k.Variant == "device-resident" && k.GBps > 0 {
			addDiag(r, codeResident, predictions.Info, fmt.Sprintf(
				"device-resident kernel %.0f GB/s (%s) = %.0f%% of the device-to-device cudaMemcpy bandwidth %.0f GB/s measured in the same run",
				k.GBps, k.From, 100*k.GBps/r.DeviceCopyGBps, r.DeviceCopyGBps))
			return
		}
	}
}
