package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/predictions"
	"github.com/nsyscheck/nsyscheck/privacy"
)

// attachExposure scans the capture files an input was read from (SQLite
// exports and .nsys-rep reports) for what they reveal of the machine beyond
// the check — other processes, environment variables outside the allowlist,
// secrets — and adds a capture-exposes warning per kind of finding. Values
// are never shown in full.
func attachExposure(r *predictions.Result, c *capture.Capture) {
	seen := map[string]bool{}
	for _, f := range append([]string{c.Path}, c.Files...) {
		ext := strings.ToLower(filepath.Ext(f))
		if (ext != ".sqlite" && ext != ".nsys-rep") || seen[f] || strings.HasSuffix(f, ".nsyscheck.sqlite") {
			continue
		}
		seen[f] = true
		rep, err := privacy.Scan(f)
		if err != nil {
			addDiag(r, "capture-scan-failed", predictions.Info,
				fmt.Sprintf("could not scan %s for exposed environment or processes: %v", f, err))
			continue
		}
		for _, d := range rep.Diagnostics() {
			addDiag(r, d.Code, predictions.Level(d.Level), d.Message)
		}
	}
}
