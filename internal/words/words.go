// Package words writes lists as a sentence does, for messages and reports.
package words

import "strings"

// List joins s as a sentence does: "a", "a and b", "a, b and c"; "" for
// none.
func List(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
