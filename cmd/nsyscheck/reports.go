package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/nsyscheck/nsyscheck/predictions"
	"github.com/nsyscheck/nsyscheck/runner"
)

// writeRunReports writes the verdicts into the run folder: report.txt for a
// person, verdicts.json for scripts.
func writeRunReports(run *runner.Run, r *predictions.Result) error {
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		return err
	}
	if err := writeNew(run.Path("report.txt"), text.Bytes()); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return writeNew(run.Path("verdicts.json"), append(data, '\n'))
}

// writeNew writes a file that must not exist yet.
func writeNew(path string, data []byte) error {
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

// writeMarkdown renders the verdicts as Markdown tables.
func writeMarkdown(w io.Writer, results []*predictions.Result) error {
	var b bytes.Buffer
	for _, r := range results {
		fmt.Fprintf(&b, "## %s (%s)\n\n| claim | verdict | measured | bound | evidence |\n|---|---|---|---|---|\n", r.Input.Path, r.Input.Format)
		for _, c := range r.Claims {
			measured := "–"
			if c.Measured != nil {
				measured = fmt.Sprintf("%.4g", *c.Measured)
			}
			ev := c.Reason
			if c.Verdict != predictions.Unavailable && len(c.Evidence) > 0 {
				ev = c.Evidence[len(c.Evidence)-1]
			}
			fmt.Fprintf(&b, "| %s | **%s** | %s | %s %.4g | %s |\n", c.ID, c.Verdict, measured, c.Comparison, c.Bound, ev)
		}
		b.WriteString("\n")
		for _, d := range r.Diagnostics {
			fmt.Fprintf(&b, "- %s `%s`: %s\n", d.Level, d.Code, d.Message)
		}
		b.WriteString("\n")
	}
	_, err := w.Write(b.Bytes())
	return err
}
