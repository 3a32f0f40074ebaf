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

// Affinities of a declared SQLite column type, by SQLite's rules
// (https://www.sqlite.org/datatype3.html, 3.1).
const (
	AffinityInteger = "INTEGER"
	AffinityText    = "TEXT"
	AffinityBlob    = "BLOB"
	AffinityReal    = "REAL"
	AffinityNumeric = "NUMERIC"
)

// Affinity is the affinity SQLite gives a column declared with type decl.
func Affinity(decl string) string {
	d := strings.ToUpper(decl)
	switch {
	case strings.Contains(d, "INT"):
		return AffinityInteger
	case strings.Contains(d, "CHAR"), strings.Contains(d, "CLOB"), strings.Contains(d, "TEXT"):
		return AffinityText
	case d == "", strings.Contains(d, "BLOB"):
		return AffinityBlob
	case strings.Contains(d, "REAL"), strings.Contains(d, "FLOA"), strings.Contains(d, "DOUB"):
		return AffinityReal
	}
	return AffinityNumeric
}
