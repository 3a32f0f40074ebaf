package main

import (
	"strings"
	"testing"
)

// jsonPlaceCases: results JSON that cannot be read, the error placing what
// is wrong on its line.
func jsonPlaceCases() []badCase {
	edited := func(from, to string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			p := copyShipped(t, dir, "pinned.results.json")
			s := string(readFile(t, p))
			if !strings.Contains(s, from) {
				t.Fatalf("the shipped results JSON holds no %q", from)
			}
			writeFile(t, p, []byte(strings.Replace(s, from, to, 1)))
			return []string{p}
		}
	}
	return []badCase{
		{group: "impossible values", name: "results JSON: the third copy's time 1e400, past any float (once placed only as copies.ms, not which copy)",
			make: edited(`"bytes": 16777216, "ms": 1.109088`, `"bytes": 16777216, "ms": 1e400`),
			exit: 2, want: []string{"pinned.results.json: copies.ms (line 10): not a valid measurements JSON", "cannot unmarshal number 1e400"}},
		{group: "impossible values", name: "results JSON: a number written 1.1.0 in the third copy (once placed only by its byte)",
			make: edited(`"bytes": 16777216, "ms": 1.109088`, `"bytes": 16777216, "ms": 1.1.0`),
			exit: 2, want: []string{"pinned.results.json: line 10, byte 452: not a valid measurements JSON"}},
	}
}
