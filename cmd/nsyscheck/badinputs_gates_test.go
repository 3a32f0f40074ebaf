package main

// gateCases: the program's correctness gates, which its timings rest on,
// reported twice in its transcript or results file (the same verdict
// again, or the other), or one of them gone beside the others. Each is
// made from the shipped program output.
func gateCases() []badCase {
	const group = "the program's gates reported twice"
	return []badCase{
		{group: group, name: "transcript: the h2d-pinned copy-back gate ok on a second line, after Part 3 (once predictions 1-3 held)",
			make: programEdit("pinned.transcript.txt", "gate kernel-zero-copy             ok\n",
				"gate kernel-zero-copy             ok\ngate h2d-pinned copy-back         ok\n"),
			exit: 2, want: []string{"pinned.transcript.txt: lines 3 and 35", `the correctness gate "h2d-pinned copy-back" is reported twice (passed on line 3, passed on line 35)`},
			notHeld: []string{"1", "2", "3", "4"}},
		{group: group, name: "transcript: the kernel-zero-copy gate ok, then FAILED on the next line",
			make: programEdit("pinned.transcript.txt", "gate kernel-zero-copy             ok\n",
				"gate kernel-zero-copy             ok\ngate kernel-zero-copy             FAILED: sum mismatch\n"),
			exit: 2, want: []string{"pinned.transcript.txt: lines 34 and 35", "(passed on line 34, failed on line 35)"},
			notHeld: []string{"1", "2", "3", "4"}},
		{group: group, name: "results JSON: the h2d-pageable copy-back gate passed, then failed",
			make: programEdit("pinned.results.json", `{"name": "h2d-pageable copy-back", "passed": true, "detail": ""},`,
				`{"name": "h2d-pageable copy-back", "passed": true, "detail": ""}, {"name": "h2d-pageable copy-back", "passed": false, "detail": "byte 5 differs"},`),
			exit: 2, want: []string{"pinned.results.json: gates[1] repeats gates[0] (h2d-pageable copy-back)"},
			notHeld: []string{"1", "2", "3", "4"}},
		{group: group, name: "transcript: the h2d-pageable copy-back gate's line deleted, the other gates kept (once every prediction it answers held)",
			make: programEdit("pinned.transcript.txt", "gate h2d-pageable copy-back       ok\n", ""),
			exit: 2, want: []string{"pinned.transcript.txt: the transcript reports the timings of h2d pageable copies without the correctness gate \"h2d-pageable copy-back\""},
			notHeld: []string{"1", "2", "3", "4"}},
		{group: group, name: "results JSON: the kernel-zero-copy gate deleted, the other gates kept (once prediction 3 held)",
			make: programEdit("pinned.results.json", `,
    {"name": "kernel-zero-copy", "passed": true, "detail": ""}`, ""),
			exit: 2, want: []string{"pinned.results.json: gates lack \"kernel-zero-copy\", the correctness gate that checks the timings of the zero-copy kernel's launches"},
			notHeld: []string{"1", "2", "3", "4"}},
	}
}
