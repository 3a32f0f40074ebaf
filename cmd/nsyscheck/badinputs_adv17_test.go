package main

// shareCases: audits read back whose shares no audit makes, and other
// inputs once answered without a word of what went wrong.
func shareCases() []badCase {
	const jsons = "JSON nested without end, and audits edited"
	region := func(results []map[string]any, i int) map[string]any {
		return results[0]["regions"].([]any)[i].(map[string]any)
	}
	// classShare sets the share of each class (and top offender) whose share
	// is above from to v.
	classShare := func(from, v float64) func(results []map[string]any, check map[string]any) {
		return func(results []map[string]any, check map[string]any) {
			for _, k := range []string{"classes", "topOffenders"} {
				for _, c := range results[0][k].([]any) {
					if c := c.(map[string]any); c["hostShare"].(float64) > from {
						c["hostShare"] = v
					}
				}
			}
		}
	}
	return []badCase{
		{group: jsons, name: "report of an audit JSON whose class held -50% of its region (once rendered as -50.0%)", cmd: "report",
			make: editedAudit(classShare(0.2, -0.5)),
			exit: 2, want: []string{"audit.json", "classes[0] (cudaMemcpyAsync HtoD pageable 1MiB-16MiB", "hostShare is -0.5, not a share", "the file was edited"},
			never: []string{"-50.0%"}},
		{group: jsons, name: "report of an audit JSON whose class held 400% of its region, not the share its host time gives (once rendered as 400.0%)", cmd: "report",
			make: editedAudit(classShare(0.2, 4)),
			exit: 2, want: []string{"audit.json", "hostShare is 4, but its 48640880 ns of host time are a share of 0.21551276396611266 of its region \"step\"", "the file was edited"}},
		{group: jsons, name: "report of an audit JSON whose region's copies were overlapped 170% of their time (once accepted)", cmd: "report",
			make: editedAudit(func(results []map[string]any, check map[string]any) {
				region(results, 2)["overlap"].(map[string]any)["measured"] = 1.7
			}),
			exit: 2, want: []string{"audit.json", `regions[2] ("step").overlap.measured is 1.7, above 1, where it is a part of a whole`}},
	}
}
