package main

import (
	"github.com/nsyscheck/nsyscheck/internal/environ"
	"os"
	"path/filepath"
	"strings"
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

// pathRule names the absolute folder from as to: a path in it becomes
// to/rest (to:rest when to ends with ":"), the folder itself to.
type pathRule struct{ from, to string }

// sharePaths is the one rewriter of the paths output meant for sharing
// names, for verify's results and the audit alike: each rule in turn,
// wherever a path or a text from outside the result names the folder.
type sharePaths []pathRule

// apply rewrites one path or text.
func (s sharePaths) apply(text string) string {
	sep := string(filepath.Separator)
	for _, r := range s {
		if r.from == "" || r.from == r.to {
			continue
		}
		from := strings.TrimSuffix(r.from, sep)
		if text == from {
			text = r.to
			continue
		}
		prefix := strings.TrimSuffix(r.to, sep) + sep
		if strings.HasSuffix(r.to, ":") {
			prefix = r.to
		}
		text = strings.ReplaceAll(text, from+sep, prefix)
	}
	return text
}

// shippedPrefix starts the name output gives the capture shipped inside
// nsyscheck, whose temporary copy has a new path each run.
const shippedPrefix = "shipped:"

// cacheRule names the user's cache folder, where exports of reports in
// read-only folders go (env's), as "cache:"; none where there is no cache
// folder.
func cacheRule(env environ.Env) []pathRule {
	if ucd, err := env.UserCacheDir(); err == nil {
		return []pathRule{{from: ucd, to: "cache:"}}
	}
	return nil
}

// shareInput is the rewriter for what verify says of an input given as
// given: the shipped capture's temporary folder as "shipped:"; else the
// input's folder as given relative to the working folder (paths given
// relative stay as given) and the user's cache folder (env's) as "cache:".
func shareInput(given string, shipped bool, env environ.Env) sharePaths {
	abs, err := filepath.Abs(given)
	if err != nil {
		return nil
	}
	dir := abs
	if st, err := os.Stat(abs); err == nil && !st.IsDir() {
		dir = filepath.Dir(abs)
	}
	if shipped {
		return sharePaths{{from: filepath.Dir(dir), to: shippedPrefix}}
	}
	return append(sharePaths{{from: dir, to: shownPath(dir)}}, cacheRule(env)...)
}
