package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// outputCases: audits read back whose numbers contradict one another, and
// a scrub whose own output once read as a leak.
func outputCases() []badCase {
	const scrubs = "names that hold secrets or terminal escapes"
	const jsons = "JSON nested without end, and audits edited"
	prediction := func(results []map[string]any) map[string]any { return results[0]["prediction"].(map[string]any) }
	region := func(results []map[string]any, i int) map[string]any {
		return results[0]["regions"].([]any)[i].(map[string]any)
	}
	const expects = "audit rates and --expect files"
	// trainExpect copies the training capture before the fix and its
	// shipped expected audit, edited (old replaced by new), into dir.
	trainExpect := func(old, new string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			const shipped = "../../testdata/captures/train-pageable/"
			body := string(readFile(t, shipped+"audit-expect.json"))
			if !strings.Contains(body, old) {
				t.Fatalf("the shipped expected audit holds no %s", old)
			}
			c, e := filepath.Join(dir, "train-pageable.sqlite"), filepath.Join(dir, "audit-expect.json")
			writeFile(t, c, readFile(t, shipped+"train-pageable.sqlite"))
			writeFile(t, e, []byte(strings.Replace(body, old, new, 1)))
			return []string{c, "--expect", e, "--nvidia-rule", "off"}
		}
	}
	return []badCase{
		{group: expects, name: "audit --expect with more pageable host-to-device copies (900) than copies (207)", cmd: "audit",
			make: trainExpect(`"pageableHtod": 140`, `"pageableHtod": 900`),
			exit: 2, want: []string{"audit-expect.json: pageableHtod: 900 pageable host-to-device copies, more than the 207 copies in all (copies)"}},
		{group: expects, name: "audit --expect whose check holds while its region step dies", cmd: "audit",
			make: trainExpect(`"verdict": "held",
      "faster": false`, `"verdict": "died",
      "faster": false`),
			exit: 2, want: []string{"audit-expect.json: verdict: held, but regions.step.verdict is died, and a check dies when a region it judges dies"}},
		{group: expects, name: `audit --expect of the shipped expected audit copied away from the capture its "against" names (once refused as a missing input of the user's)`, cmd: "audit",
			make: trainExpect(`"against"`, `"against"`),
			exit: 2, want: []string{`audit-expect.json: "against": "../train-pinned" names`, "(relative to the file's folder), which does not exist", "or give it as AFTER"}},
		{group: expects, name: "audit --rates of the shipped run folder with its run.json cut short (once read as no record: its status and GPU unread, its rates used)", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				const run = "../../testdata/captures/h200-run/"
				rates := filepath.Join(dir, "run")
				if err := os.Mkdir(rates, 0o755); err != nil {
					t.Fatal(err)
				}
				info := readFile(t, run+"run.json")
				writeFile(t, filepath.Join(rates, "run.json"), info[:len(info)/3])
				writeFile(t, filepath.Join(rates, "pinned.results.json"), readFile(t, run+"pinned.results.json"))
				return []string{"../../testdata/captures/train-pageable", "--rates", rates, "--nvidia-rule", "off"}
			},
			exit: 2, want: []string{"run/run.json: not a run's record (is it cut short?), so the run is not known to have completed, nor on which GPU", "run it again"}},
		{group: jsons, name: "report of an audit JSON pinning 99999 pageable copies where its groups hold 140 (once rendered as pinning 99999)", cmd: "report",
			make: editedAudit(func(results []map[string]any, check map[string]any) { prediction(results)["count"] = 99999 }),
			exit: 2, want: []string{"audit.json", "prediction.count is 99999, but its groups sum 140: the file was edited"},
			never: []string{"pinning the 99999"}},
		{group: jsons, name: "report of an audit JSON whose saving is not the host time before less after (once rendered as saving -5 ns)", cmd: "report",
			make: editedAudit(func(results []map[string]any, check map[string]any) { prediction(results)["savedNs"] = -5 }),
			exit: 2, want: []string{"audit.json", "prediction.savedNs is -5 ns, but the host time before", "the file was edited"}},
		{group: jsons, name: "report of an audit JSON whose region ran -3 times (once rendered as the median of -3 instances)", cmd: "report",
			make: editedAudit(func(results []map[string]any, check map[string]any) { region(results, 1)["instances"] = -3 }),
			exit: 2, want: []string{"audit.json", `regions[1] ("epoch").instances is -3, below zero`}},
		{group: jsons, name: "report of an audit JSON whose pageable copy calls outlast all its copy calls", cmd: "report",
			make: editedAudit(func(results []map[string]any, check map[string]any) {
				r := region(results, 0)
				r["pageableCallMs"] = r["copyCallMs"].(float64) * 5
			}),
			exit: 2, want: []string{"audit.json", `regions[0] ("(capture)").pageableCallMs is`, "longer than all its copy calls' copyCallMs"}},
		{group: jsons, name: "report of an audit JSON whose first top offender holds 99999 copies, none of its classes (once rendered as 99999 copies)", cmd: "report",
			make: editedAudit(func(results []map[string]any, check map[string]any) {
				results[0]["topOffenders"].([]any)[0].(map[string]any)["count"] = 99999
			}),
			exit: 2, want: []string{"audit.json", "topOffenders[0] (cudaMemcpyAsync HtoD pageable 1MiB-16MiB", "is none of the audit's classes: the file was edited"}},
		{group: jsons, name: "report of an audit JSON with a null among its classes (once a crash)", cmd: "report",
			make: editedAudit(func(results []map[string]any, check map[string]any) {
				results[0]["classes"] = append(results[0]["classes"].([]any), nil)
			}),
			exit: 2, want: []string{"audit.json", "classes[5] is null, where no audit writes one: the file was edited"}, never: []string{"panic"}},
		{group: jsons, name: "report of an audit JSON counting -4 CUDA API calls", cmd: "report",
			make: editedAudit(func(results []map[string]any, check map[string]any) { results[0]["apiCalls"] = -4 }),
			exit: 2, want: []string{"audit.json", "apiCalls -4: a count below zero"}},
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
