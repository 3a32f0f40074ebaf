package nsysdb

import (
	"net/url"
	"path/filepath"
	"strings"
)

// QuoteIdent quotes a table or column name read from a file for use in SQL,
// doubling any quote inside it.
func QuoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// URI is the SQLite URI of the file at path (made absolute, every character
// SQLite could read specially escaped) with the given query, e.g.
// "mode=ro&immutable=1" or "mode=rw"; an empty query adds none.
func URI(path, query string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	// url.URL leaves a few characters SQLite would read specially as they are.
	p := u.EscapedPath()
	p = strings.ReplaceAll(p, "'", "%27")
	if query == "" {
		return "file:" + p
	}
	return "file:" + p + "?" + query
}

// ReadOnlyURI opens path read-only and immutable, so that SQLite neither
// writes to it nor creates anything beside it.
func ReadOnlyURI(path string) string { return URI(path, "mode=ro&immutable=1") }
