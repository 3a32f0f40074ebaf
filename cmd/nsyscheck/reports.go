package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nsyscheck/nsyscheck/check"
	"github.com/nsyscheck/nsyscheck/predictions"
	"github.com/nsyscheck/nsyscheck/report"
	"github.com/nsyscheck/nsyscheck/runner"
)

// writeRunReports writes the verdicts into the run folder: report.txt for a
// terminal, verdicts.json for scripts, and report.md and report.html with
// their plots for a person.
func writeRunReports(run *runner.Run, k *check.Checked) error {
	r := k.Result
	var text bytes.Buffer
	// A file read later: every evidence line, at the default width.
	if err := report.Text(&text, r, report.TextOptions{Verbose: true}); err != nil {
		return err
	}
	if err := writeNew(run.Path("report.txt"), text.Bytes()); err != nil {
		return err
	}
	var data bytes.Buffer
	if err := report.WriteJSON(&data, report.VerifyEnvelope([]*predictions.Result{r}, buildVersion())); err != nil {
		return err
	}
	if err := writeNew(run.Path("verdicts.json"), data.Bytes()); err != nil {
		return err
	}
	rep, err := report.Build(r, report.Options{Link: k.Link()})
	if err != nil {
		return err
	}
	_, err = rep.WriteDir(run.Dir, false)
	return err
}

// writeNew writes a file that must not exist yet, cleaned as a report's
// files are (report.CleanFile: credentials masked, control characters
// escaped).
func writeNew(path string, data []byte) error {
	data = report.CleanFile(filepath.Base(path), data)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
