package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/predictions"
)

// shownPath is how an input path appears in output meant for sharing: relative
// to the working folder, never by its absolute location (which names a home
// folder or a temporary one).
func shownPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	rel, err := filepath.Rel(wd, abs)
	if err != nil {
		return p
	}
	return rel
}

// renamePaths replaces the absolute folder from, wherever the result names
// it (input, files read, evidence, reasons, diagnostics), with to.
func renamePaths(r *predictions.Result, from, to string) {
	if from == "" || from == to {
		return
	}
	sep := string(filepath.Separator)
	from = strings.TrimSuffix(from, sep)
	prefix := strings.TrimSuffix(to, sep) + sep
	if strings.HasSuffix(to, ":") {
		prefix = to
	}
	repl := strings.NewReplacer(from+sep, prefix)
	fix := func(s string) string {
		if s == from {
			return to
		}
		return repl.Replace(s)
	}
	r.Input.Path = fix(r.Input.Path)
	for i := range r.Input.Files {
		r.Input.Files[i] = fix(r.Input.Files[i])
	}
	r.Input.ProgramSource = fix(r.Input.ProgramSource)
	for i := range r.Input.SetAside {
		r.Input.SetAside[i].Path = fix(r.Input.SetAside[i].Path)
		r.Input.SetAside[i].Reason = fix(r.Input.SetAside[i].Reason)
	}
	for i := range r.Claims {
		c := &r.Claims[i]
		c.Reason = fix(c.Reason)
		for j := range c.Evidence {
			c.Evidence[j].Text = fix(c.Evidence[j].Text)
		}
		for j := range c.Sources {
			c.Sources[j].Reason = fix(c.Sources[j].Reason)
		}
	}
	r.Exercise.Reason = fix(r.Exercise.Reason)
	for i := range r.Exercise.Evidence {
		r.Exercise.Evidence[i].Text = fix(r.Exercise.Evidence[i].Text)
	}
	for i, d := range r.Diagnostics {
		if n, ok := d.Detail.(diag.Note); ok {
			n.Text = fix(n.Text)
			r.Diagnostics[i].Detail = n
		}
	}
	r.DeviceCopyFrom = fix(r.DeviceCopyFrom)
}

// shareable rewrites the paths a result names: a given path's folder as
// given relative to the working folder, the shipped capture's temporary
// folder as "shipped:", the user's cache folder (where exports of reports in
// read-only folders go) as "cache:".
func shareable(r *predictions.Result, given string, shipped bool) {
	abs, err := filepath.Abs(given)
	if err != nil {
		return
	}
	dir := abs
	if st, err := os.Stat(abs); err == nil && !st.IsDir() {
		dir = filepath.Dir(abs)
	}
	if shipped {
		renamePaths(r, filepath.Dir(dir), "shipped:")
		return
	}
	// Paths given relative stay as given; absolute ones become relative.
	renamePaths(r, dir, shownPath(dir))
	// A report's export cached in the user's cache folder.
	if ucd, err := os.UserCacheDir(); err == nil {
		renamePaths(r, ucd, "cache:")
	}
}
