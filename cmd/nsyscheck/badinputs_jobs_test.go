package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// jobCases: the captures of the real data-parallel job (ddp-ranks) given
// to audit --ranks mixed with what is not of the job's one run: a rank
// captured in another run of it, one rank's capture given as two ranks;
// and by a pattern that matches what nsys
// wrote beside each rank's export too; and one rank's rule CSV (NVIDIA's
// cuda_memcpy_async, read beside the export) listing its copies larger
// than the export's records give them; and a rank that launched half the
// kernels its peers did, each name kept.
func jobCases() []badCase {
	const jobs = "ranks of one job"
	// job copies the job's four ranks into dir, runs stmts on rank 1's
	// copy, and returns --ranks's arguments: the folder.
	job := func(stmts ...string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			for r := 0; r < 4; r++ {
				name := fmt.Sprintf("report.%d.sqlite", r)
				writeFile(t, filepath.Join(dir, name), readFile(t, filepath.Join("../../testdata/captures/ddp-ranks", name)))
			}
			if len(stmts) > 0 {
				db := openRW(t, filepath.Join(dir, "report.1.sqlite"))
				mustExec(t, db, stmts...)
				db.Close()
			}
			return []string{"--ranks", dir, "-j", "2", "--nvidia-rule", "off"}
		}
	}
	// whole copies every file of the job's folder (exports, nsys's stdout,
	// the rule's CSVs) into dir and returns --ranks's arguments: pattern,
	// joined to dir.
	whole := func(pattern string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			src := "../../testdata/captures/ddp-ranks"
			for r := 0; r < 4; r++ {
				for _, f := range []string{".sqlite", ".stdout.txt", "_cuda_memcpy_async.csv"} {
					name := fmt.Sprintf("report.%d%s", r, f)
					writeFile(t, filepath.Join(dir, name), readFile(t, filepath.Join(src, name)))
				}
			}
			return []string{"--ranks", filepath.Join(dir, pattern), "-j", "2", "--nvidia-rule", "off"}
		}
	}
	// twice copies the job's ranks 0 to 2 into dir and gives rank 2's
	// capture as rank 3 too, by link (or copy): --ranks's arguments.
	twice := func(link bool) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			args := job()(t, dir)
			r3 := filepath.Join(dir, "report.3.sqlite")
			if err := os.Remove(r3); err != nil {
				t.Fatal(err)
			}
			if link {
				if err := os.Symlink("report.2.sqlite", r3); err != nil {
					t.Fatal(err)
				}
			} else {
				writeFile(t, r3, readFile(t, filepath.Join(dir, "report.2.sqlite")))
			}
			return args
		}
	}
	// ruleEdit copies rank 2's export into dir with its rule CSV beside,
	// edited, and returns audit's arguments: the export, then more.
	ruleEdit := func(edit func(string) string, more ...string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			src := "../../testdata/captures/ddp-ranks/report.2"
			p := filepath.Join(dir, "report.2.sqlite")
			writeFile(t, p, readFile(t, src+".sqlite"))
			writeFile(t, filepath.Join(dir, "report.2_cuda_memcpy_async.csv"), []byte(edit(string(readFile(t, src+"_cuda_memcpy_async.csv")))))
			return append([]string{p}, more...)
		}
	}
	// shards audits ranks 0 and 1 and ranks 2 and 3 of the job as two
	// shards (audit --ranks --format json each), edits the first shard's
	// JSON and returns --ranks's arguments: the two JSON files.
	shards := func(edit func(env map[string]any)) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			src := "../../testdata/captures/ddp-ranks/"
			var files []string
			for i, pair := range [][]string{{"report.0", "report.1"}, {"report.2", "report.3"}} {
				code, out, stderr := runMain(t, []string{"audit", "--ranks", "--format", "json", "--nvidia-rule", "off",
					src + pair[0] + ".sqlite", src + pair[1] + ".sqlite"})
				if code != exitDied && code != exitHeld {
					t.Fatalf("audit --ranks of %v: %d %s", pair, code, stderr)
				}
				if i == 0 {
					var env map[string]any
					if err := json.Unmarshal([]byte(out), &env); err != nil {
						t.Fatal(err)
					}
					edit(env)
					b, err := json.Marshal(env)
					if err != nil {
						t.Fatal(err)
					}
					out = string(b)
				}
				p := filepath.Join(dir, fmt.Sprintf("shard%d.json", i))
				writeFile(t, p, []byte(out))
				files = append(files, p)
			}
			return append([]string{"--ranks"}, files...)
		}
	}
	return []badCase{
		{group: jobs, name: "audit --ranks of two shards' JSON, the first's results emptied, its rows kept (once merged as a job of ranks 2 and 3 alone)", cmd: "audit",
			make: shards(func(env map[string]any) { env["results"] = []any{} }),
			exit: 2, want: []string{"shard0.json: ranks.rows[0] lists ", "report.0.sqlite as audited, but no result holds its audit: the file was edited"}},
		{group: jobs, name: "audit --ranks of two shards' JSON, rank 0's pinned host-to-device total renamed pageable (once it stood out, at 61% pageable)", cmd: "audit",
			make: shards(func(env map[string]any) {
				for _, t := range env["results"].([]any)[0].(map[string]any)["totals"].([]any) {
					if t := t.(map[string]any); t["direction"] == "HtoD" && t["hostMemory"] == "pinned" {
						t["hostMemory"] = "pageable"
					}
				}
			}),
			exit: 2, want: []string{"shard0.json: result 1: an audit that cannot be read: totals[", "(HtoD, pageable, async) is listed twice: the file was edited"}},
		{group: jobs, name: "audit --ranks of the job, report.3.sqlite a link to rank 2's export (once audited as two ranks)", cmd: "audit",
			make: twice(true),
			exit: 2, want: []string{"--ranks: ranks 2 and 3 are one capture, given as ", "report.2.sqlite and as ", "report.3.sqlite (one file, by a link)"}},
		{group: jobs, name: "audit --ranks of the job, rank 2's export copied as rank 3 (once audited as two ranks)", cmd: "audit",
			make: twice(false),
			exit: 2, want: []string{"--ranks: ranks 2 and 3 are one capture: ", "record one session, started at the same nanosecond (1796188822126930177 ns since 1970)"}},
		{group: jobs, name: "audit --ranks of the job, rank 1 captured a day later (its session start moved a day; once its peers' in silence)", cmd: "audit",
			make: job(`UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = utcEpochNs + 86400000000000`),
			exit: 1, want: []string{"1 rank from another run of the job, compared only with ranks of their own run",
				"report.1.sqlite was captured in another run of the job than rank 0's", "its session started 2026-12-03 05:20:22 UTC, rank 0's 2026-12-02 05:20:22 UTC"}},
		{group: jobs, name: "audit --ranks of the job, rank 1's session start the largest int64, the year 2262 (once its end wrapped round to 1677 and it was a peer)", cmd: "audit",
			make: job(`UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = 9223372036854775807`),
			exit: 1, want: []string{"1 rank from another run of the job", "its session started 2262-04-11 23:47:16 UTC, rank 0's 2026-12-02 05:20:22 UTC"}},
		{group: jobs, name: "audit --ranks of the job, rank 1's session start 0 ns (once read as no start: its run unchecked, in silence)", cmd: "audit",
			make: job(`UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = 0`),
			exit: 1, want: []string{"1 rank whose capture's session start cannot be a real one, not checked for another run",
				"report.1.sqlite records a session start no capture can have: TARGET_INFO_SESSION_START_TIME.utcEpochNs holds 0 ns, a start at or before 1970"}},
		{group: jobs, name: "audit --ranks of the job, rank 1's session start -1 ns (once read as no start: its run unchecked, in silence)", cmd: "audit",
			make: job(`UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = -1`),
			exit: 1, want: []string{"1 rank whose capture's session start cannot be a real one, not checked for another run",
				"report.1.sqlite records a session start no capture can have: TARGET_INFO_SESSION_START_TIME.utcEpochNs holds -1 ns, a start at or before 1970"}},
		{group: jobs, name: "audit --ranks of the job, each rank's environment naming SLURM job 100 but rank 1's job 200, the sessions 17 ms apart (once one run: the job unread)", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				args := job(`UPDATE TARGET_INFO_SYSTEM_ENV SET value = value || ';SLURM_JOB_ID=200' WHERE name = 'DeviceEnvironment'`)(t, dir)
				for _, r := range []string{"0", "2", "3"} {
					db := openRW(t, filepath.Join(dir, "report."+r+".sqlite"))
					mustExec(t, db, `UPDATE TARGET_INFO_SYSTEM_ENV SET value = value || ';SLURM_JOB_ID=100' WHERE name = 'DeviceEnvironment'`)
					db.Close()
				}
				return args
			},
			exit: 1, want: []string{"1 rank from another run of the job", "report.1.sqlite was captured in another run of the job than rank 0's",
				"its job is SLURM_JOB_ID 27badc983df1, rank 0's SLURM_JOB_ID ad5736686512"}},
		{group: jobs, name: "audit --ranks 'DIR/report.*' over the job's folder: the pattern matches each rank's stdout and rule CSV too (once refused as rank 0 given twice, by its stdout)", cmd: "audit",
			make: whole("report.*"),
			exit: 1, want: []string{"Ranks of the job: 4 captures audited; 1 rank stands out against its peers"}},
		{group: jobs, name: "audit --ranks 'DIR/*.txt' over the job's folder: nsys's stdout files alone", cmd: "audit",
			make: whole("*.txt"),
			exit: 2, want: []string{"*.txt: matches no capture: 4 files, none an export, a report or another input nsyscheck reads alone (the first: ", "report.0.stdout.txt", "give their folder"}},
		{group: jobs, name: "audit --ranks of the job, rank 1's every second kernel launch deleted, names kept, nsys's count of events dropped (once a peer: kernels compared by name alone)", cmd: "audit",
			make: job(`DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid % 2 = 0`, `DELETE FROM DIAGNOSTIC_EVENT`),
			exit: 1, want: []string{"1 rank not of the job's program", "report.1.sqlite is not a capture of rank 0's program", "kernels: 940 launches in rank 0 and 0 in rank 1 that the other capture did not launch as often, name for name (50.0%, more than 1%)"}},
		{group: jobs, name: "audit of rank 2 with its rule CSV beside listing the same copies, 50 of them 1 MB larger each (once it agreed: copies matched by start alone)", cmd: "audit",
			make: ruleEdit(func(rule string) string {
				return strings.ReplaceAll(rule, ",Pageable,Device,0.", ",Pageable,Device,1.")
			}, "--format", "json"),
			exit: 1, want: []string{`"agree": false`, `"ruleMB": `, `"auditMB": `, `"sizesDiffer": 50,`}},
		{group: jobs, name: "audit of rank 2 with its rule CSV beside, the sizes of its 0.074 MB copy and of a 0.003 MB one swapped, the total kept (once it agreed: sizes compared as a total)", cmd: "audit",
			make: ruleEdit(func(rule string) string {
				return strings.Replace(strings.Replace(strings.Replace(rule, ",0.074,", ",X,", 1), ",0.003,", ",0.074,", 1), ",X,", ",0.003,", 1)
			}),
			exit: 1, want: []string{"disagrees: it lists the same 93 pageable async copies, but gives 2 of them other sizes than the capture's records do (1 copy: 0.003 MB in the rule, 0.074 MB in the records; 1 copy: 0.074 MB in the rule, 0.003 MB in the records)"}},
	}
}
