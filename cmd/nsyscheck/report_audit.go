package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/report"
)

// readAuditJSON reads the output of `audit --format json`; ok is false
// when path is not one (then report reads it as a capture).
func readAuditJSON(path string) (*audit.Output, bool, error) {
	if !strings.EqualFold(filepath.Ext(path), ".json") {
		return nil, false, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false, nil
	}
	var head struct {
		SchemaVersion string `json:"schemaVersion"`
	}
	if json.Unmarshal(data, &head) != nil || head.SchemaVersion != audit.SchemaVersion {
		return nil, false, nil
	}
	var out audit.Output
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&out); err != nil {
		return nil, true, fmt.Errorf("%s: an audit (%s) that cannot be read: %w", path, audit.SchemaVersion, err)
	}
	if out.Before == nil {
		return nil, true, fmt.Errorf("%s: an audit with no \"before\" capture; write it again with nsyscheck audit CAPTURE --format json", path)
	}
	return &out, true, nil
}

// runAuditReport writes the report of an audit read from JSON.
func runAuditReport(opts *reportOptions, path string, out *audit.Output, s Streams) error {
	rep, err := report.BuildAudit(out.Before, out.After, out.Check)
	if err != nil {
		return &statusError{code: exitError, err: fmt.Errorf("%s: %w", path, err)}
	}
	written, err := rep.WriteDir(opts.Out, opts.Force)
	if err != nil {
		return &statusError{code: exitError, err: err}
	}
	if rep.Plot.Skipped != "" {
		fmt.Fprintf(s.Err, "%s: %s plot not drawn: %s\n", path, rep.Plot.Name, rep.Plot.Skipped)
	}
	fmt.Fprintf(s.Out, "%s: %s (%d files)\n", path, filepath.Join(opts.Out, report.AuditHTMLFile), len(written))
	return nil
}
