package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// outputCases: audits read back whose numbers contradict one another, and
// a scrub whose own output once read as a leak.
func outputCases() []badCase {
	const scrubs = "names that hold secrets or terminal escapes"
	return []badCase{
		{group: scrubs, name: `scrub: "export TOKEN=..." as a string of StringIds, its record's next field glued on (once its "[redacted]" read as a leak and nothing was written)`,
			cmd: "scrub",
			make: func(t *testing.T, dir string) []string {
				p := sqliteEdit(`INSERT INTO StringIds (id, value) VALUES (999999, 'export TOKEN=abcdefsecretvalue')`)(t, dir)[0]
				return []string{p, "-o", filepath.Join(dir, "shared.sqlite")}
			},
			mayWrite: true, exit: 0, want: []string{"removed or redacted 1 finding", "secret TOKEN=…(17 chars) in table StringIds column value"},
			never: []string{"abcdefsecretvalue", "raw bytes"},
			check: func(t *testing.T, dir string) {
				if strings.Contains(string(readFile(t, filepath.Join(dir, "shared.sqlite"))), "abcdefsecretvalue") {
					t.Error("the scrubbed copy holds the token's value")
				}
			}},
	}
}
