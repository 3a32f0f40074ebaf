package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nsyscheck/nsyscheck/internal/proctest"
)

// stopCases: programs that ignore SIGTERM when nsyscheck is stopped, and
// outputs that are links to nothing or to a file.
func stopCases() []badCase {
	// stubbornVersion is stubbornNsys answering "version not supported" to
	// export and hanging, SIGTERM ignored, only on --version.
	stubbornVersion := func(t *testing.T) string {
		p := stubbornNsys(t)
		script := string(readFile(t, p))
		script = strings.Replace(script, "trap '' TERM INT\n",
			"trap '' TERM INT\n[ \"$1\" = --version ] || { echo 'ERROR: this report version not supported' >&2; exit 1; }\n", 1)
		writeFile(t, p, []byte(script))
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	childGone := func(pidFile string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			b, err := os.ReadFile(filepath.Join(dir, pidFile))
			if err != nil {
				t.Fatalf("the stand-in never started its child: %v", err)
			}
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			if pid > 0 && !proctest.Gone(pid, 2*time.Second) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("the stand-in's child %d outlived nsyscheck", pid)
			}
		}
	}
	// shard writes the JSON of audit --ranks of ranks 0 and 1 of the job
	// into dir as shard0.json, and returns its path.
	shard := func(t *testing.T, dir string) string {
		const src = "../../testdata/captures/ddp-ranks/"
		code, out, stderr := runMain(t, []string{"audit", "--ranks", "--format", "json", "--nvidia-rule", "off", src + "report.0.sqlite", src + "report.1.sqlite"})
		if code != exitDied && code != exitHeld {
			t.Fatalf("audit --ranks of ranks 0 and 1: %d %s", code, stderr)
		}
		p := filepath.Join(dir, "shard0.json")
		writeFile(t, p, []byte(out))
		return p
	}
	const train = "../../testdata/captures/train-"
	// forgedName copies the export to a name holding a newline and a
	// verdict line, and returns audit's arguments for it, then more.
	forgedName := func(more ...string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			p := filepath.Join(dir, "x\nAudit of other.sqlite: PASS\n.sqlite")
			writeFile(t, p, readFile(t, filepath.Join(shippedDir, "pinned.sqlite")))
			return append([]string{p, "--nvidia-rule", "off"}, more...)
		}
	}
	// aJSON writes data as capture.json in dir and returns audit's
	// arguments for it.
	aJSON := func(data []byte) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			p := filepath.Join(dir, "capture.json")
			writeFile(t, p, data)
			return []string{p, "--nvidia-rule", "off"}
		}
	}
	return []badCase{
		{group: "report output", name: "scrub -o a folder's name ending in /, the folder missing (once the export scrubbed, then \"cannot scrub the export: open ...tmp: no such file or directory\", blaming the export)", cmd: "scrub",
			make: func(t *testing.T, dir string) []string {
				return []string{copyShipped(t, dir, "pinned.sqlite"), "-o", filepath.Join(t.TempDir(), "new") + string(filepath.Separator)}
			},
			exit: 2, want: []string{"new/: the output ends in /, so it names a folder, and there is none there", "name a file to write, as", "new/shared.sqlite in a folder that exists"},
			never: []string{"complete nsys SQLite export", "working copy"}},
		{group: "report output", name: "scrub -o a file's name with / after it (once the export scrubbed, then \"cannot scrub the export: ... not a directory\")", cmd: "scrub",
			make: func(t *testing.T, dir string) []string {
				other := t.TempDir()
				writeFile(t, filepath.Join(other, "notes"), []byte("notes\n"))
				return []string{copyShipped(t, dir, "pinned.sqlite"), "-o", filepath.Join(other, "notes") + string(filepath.Separator)}
			},
			exit: 2, want: []string{"notes/: the output ends in /, so it names a folder, and ", "notes is a file"},
			never: []string{"complete nsys SQLite export", "working copy"}},
		{group: "ranks of one job", name: "report of a shard's JSON of audit --ranks and an audit's JSON of one capture (once \"the shard: audit-ranks's own JSON output, not a capture\")", cmd: "report",
			make: func(t *testing.T, dir string) []string {
				p := shard(t, dir)
				one := oneAudit(func(map[string]any) {})(t, dir)
				return []string{p, one[0], "-o", filepath.Join(t.TempDir(), "out")}
			},
			exit: 2, want: []string{"report: ", "shard0.json is the JSON of audit --ranks, which report merges with other such JSON alone, and ", "audit.json is not", "or merge them all first (nsyscheck audit --ranks --format json FILES > job.json, then report job.json)"},
			never: []string{"not a capture"}},
		{group: "audit", name: "audit of an empty .json (once \"holds the program's own numbers\")", cmd: "audit",
			make: aJSON(nil), exit: 2, want: []string{"capture.json: the file is empty, neither the program's numbers nor an audit's output"}},
		{group: "audit", name: "audit of a .json of 64 KiB of zero bytes (once \"holds the program's own numbers\")", cmd: "audit",
			make: aJSON(make([]byte, 64<<10)), exit: 2, want: []string{"capture.json: the file starts with only zero bytes (an interrupted copy or download?), so it is not JSON"}},
		{group: "audit", name: "audit of a .json holding a CSV report (once \"holds the program's own numbers\")", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				return aJSON(readFile(t, filepath.Join(shippedDir, "pinned_cuda_api_sum.csv")))(t, dir)
			},
			exit: 2, want: []string{"capture.json: not JSON (byte 1: invalid character", "give the capture itself"}},
		{group: "report output", name: "scrub -o the input's name with -wal added (once written there, and deleted by SQLite when the input was next opened)", cmd: "scrub",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.sqlite")
				return []string{p, "-o", p + "-wal"}
			},
			exit: 2, want: []string{"pinned.sqlite-wal: the output is named as the input's SQLite -wal file, which SQLite reads as part of pinned.sqlite", "Scrub never modifies its input", "name the output otherwise, as pinned.scrubbed.sqlite"}},
		{group: "report output", name: "scrub --force -o the input's -journal, which exists (once replaced with the copy)", cmd: "scrub",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.sqlite")
				writeFile(t, p+"-journal", nil)
				return []string{p, "--force", "-o", p + "-journal"}
			},
			exit: 2, want: []string{"pinned.sqlite-journal: the output is named as the input's SQLite -journal file"}},
		{group: "names that hold secrets or terminal escapes", name: "audit of a capture whose name holds newlines and a verdict (once shown, under the verdict, with spaces for its newlines)", cmd: "audit",
			make: forgedName(), exit: 1,
			want:  []string{`x\x0aAudit of other.sqlite: PASS\x0a.sqlite (SQLite export), NVIDIA H200`},
			never: []string{"x Audit of other.sqlite: PASS .sqlite", "\nAudit of other.sqlite"}},
		{group: "names that hold secrets or terminal escapes", name: "audit CAPTURE CAPTURE of a capture whose name holds newlines and a verdict (once its name after the fix shown with spaces for its newlines)", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				args := forgedName()(t, dir)
				return append([]string{args[0]}, append(args, "--match", "h2d-pageable=h2d-pinned")...)
			},
			exit: 0, want: []string{`(before) against`, `x\x0aAudit of other.sqlite: PASS\x0a.sqlite (after): HELD`},
			never: []string{"x Audit of other.sqlite: PASS .sqlite", "\nAudit of other.sqlite"}},
		{group: "audit", name: "audit CAPTURE CAPTURE --match h2d-pageable=h2d-pinned --match h2d-pinned=h2d-pinned: one region after matched to two before (once its one time judged against both predictions, held)", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.sqlite")
				return []string{p, p, "--nvidia-rule", "off", "--match", "h2d-pageable=h2d-pinned", "--match", "h2d-pinned=h2d-pinned"}
			},
			exit: 2, want: []string{"--match: region h2d-pinned of AFTER is matched twice, to h2d-pageable and to h2d-pinned of CAPTURE", "match each region of AFTER once"}},
		{group: "audit", name: "audit BEFORE AFTER --match step=epoch: a region of 67 instances before matched to one of one after (once \"ran 67 times before and 1 after\")", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				return []string{train + "pageable/train-pageable.sqlite", train + "pinned/train-pinned.sqlite", "--nvidia-rule", "off", "--match", "step=epoch"}
			},
			exit: 1, want: []string{"unavailable: step ran 67 times before and 1 time after, so its ranges after are not the ones predicted"}},
		{group: "audit", name: "audit of the training export with its 67 step ranges opened again on a second thread, each a third as long (once one region step of 134 instances, its median 2.931 ms, mixing the two)", cmd: "audit",
			make: shippedEdit("train-pageable/train-pageable.sqlite",
				`INSERT INTO NVTX_EVENTS(start, end, eventType, rangeId, category, color, text, globalTid, endGlobalTid, textId, domainId)
				 SELECT start + 100000, start + 100000 + (end - start) / 3, eventType, rangeId, category, color, text, 281475345809471, endGlobalTid, textId, domainId
				 FROM NVTX_EVENTS e WHERE coalesce(e.text, (SELECT value FROM StringIds WHERE id = e.textId)) = 'step'`),
			exit: 1, want: []string{"step (thread 1)  67  median  3.402", "step (thread 2)  67  median  1.140",
				"assumed range-on-threads: NVTX range step (pid 22) is opened on 2 threads"},
			never: []string{"134"}},
		{group: "ranks of one job", name: "audit --ranks of one shard's JSON given twice (once rank 0 named twice by its capture alone, not the JSON as given twice)", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				p := shard(t, dir)
				return []string{"--ranks", p, p}
			},
			exit: 2, want: []string{"--ranks: ", "shard0.json is given twice, and each of its ranks with it: give each shard's JSON once"}},
		{group: "ranks of one job", name: "report of one shard's JSON given twice (once \"--ranks: rank 0 is given twice\", a flag report does not have)", cmd: "report",
			make: func(t *testing.T, dir string) []string {
				p := shard(t, dir)
				return []string{p, p, "-o", filepath.Join(t.TempDir(), "out")}
			},
			exit: 2, want: []string{"report: ", "shard0.json is given twice, and each of its ranks with it"},
			never: []string{"--ranks:"}},
		{group: "ranks of one job", name: "audit --ranks of a shard's JSON and a link to it (once rank 0 named twice by its capture alone)", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				p := shard(t, dir)
				l := filepath.Join(dir, "again.json")
				if err := os.Symlink(p, l); err != nil {
					t.Fatal(err)
				}
				return []string{"--ranks", p, l}
			},
			exit: 2, want: []string{"--ranks: ", "shard0.json and ", "again.json are one file (by a link), the JSON of one shard, whose ranks would each count twice"}},
		{group: "ranks of one job", name: "report of a shard's JSON whose row says rank 1 copies nothing from pageable memory (once merged from the audits again, the edit dropped without a word)", cmd: "report",
			make: func(t *testing.T, dir string) []string {
				p := shard(t, dir)
				dec := json.NewDecoder(bytes.NewReader(readFile(t, p)))
				dec.UseNumber()
				var env map[string]any
				if err := dec.Decode(&env); err != nil {
					t.Fatal(err)
				}
				env["ranks"].(map[string]any)["rows"].([]any)[1].(map[string]any)["pageableShare"] = json.Number("0")
				data, err := json.MarshalIndent(env, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				writeFile(t, p, data)
				return []string{p, "-o", filepath.Join(t.TempDir(), "out")}
			},
			exit: 2, want: []string{"shard0.json: ranks.rows[1].pageableShare of ", "report.1.sqlite is 0, but the shard's audits give 0.0", "the file was edited"}},
		{group: "ranks of one job", name: "audit --ranks of a shard's JSON and rank 1's export again (once named by the capture alone, not the JSON)", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				return []string{"--ranks", shard(t, dir), "../../testdata/captures/ddp-ranks/report.1.sqlite"}
			},
			exit: 2, want: []string{"--ranks: rank 1 is given twice, as ", "report.1.sqlite (audited in ", "shard0.json) and as ../../testdata/captures/ddp-ranks/report.1.sqlite"}},
		{group: "run with tools that misbehave", name: "SIGINT while an nsys profile that ignores SIGTERM profiles (once ten seconds to stop)", cmd: "run", serial: true, mayWrite: true,
			make: func(t *testing.T, dir string) []string {
				return fakeTools(t, dir, "", "trap '' TERM INT\n(trap '' TERM INT; exec sleep 300) &\necho $! > child.pid\nwait\n")
			},
			run:  signalledAfter(syscall.SIGINT, 3*time.Second),
			exit: exitSignal, want: []string{`step "profile" stopped: interrupt signal received`},
			check: childGone(filepath.Join("run", "child.pid"))},
		{group: "interruptions", name: "audit --nvidia-rule nsys gets SIGINT while an nsys that ignores SIGTERM runs the rule (once it ran on after nsyscheck ended, and its child, and its folder was left)",
			cmd: "audit", run: interrupted(syscall.SIGINT), mayWrite: true,
			make: func(t *testing.T, dir string) []string {
				tmp := filepath.Join(dir, "tmp")
				if err := os.Mkdir(tmp, 0o755); err != nil {
					t.Fatal(err)
				}
				t.Setenv("TMPDIR", tmp)
				// Its child starts once the audit has read the export, so
				// that the signal comes while nsyscheck waits for the rule.
				p := stubbornNsys(t)
				writeFile(t, p, []byte(strings.Replace(string(readFile(t, p)), "(trap", "sleep 1\n(trap", 1)))
				return []string{"--nvidia-rule", "nsys", "--nsys", p, copyShipped(t, dir, "pinned.sqlite")}
			},
			exit: exitSignal, want: []string{"interrupted while auditing", "pinned.sqlite; nothing was written"},
			check: func(t *testing.T, dir string) {
				if left, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(left) != 0 {
					t.Errorf("nsys analyze's folder was left: %s", left[0].Name())
				}
			}},
		{group: "interruptions", name: "verify gets SIGINT while it asks an nsys too old to export the report, which ignores SIGTERM, its version (once it ran on after nsyscheck ended, and its child)",
			run: interrupted(syscall.SIGINT),
			make: func(t *testing.T, dir string) []string {
				return []string{"--nsys", stubbornVersion(t), copyShipped(t, dir, "pinned.nsys-rep")}
			},
			exit: exitSignal, want: []string{"pinned.nsys-rep: interrupted while nsys exported the report"}},
		{group: "report output", name: "scrub --force -o a link to nothing (once the link replaced by the copy)", cmd: "scrub",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.sqlite")
				out := filepath.Join(t.TempDir(), "out")
				if err := os.Symlink(filepath.Join(filepath.Dir(out), "gone"), out); err != nil {
					t.Fatal(err)
				}
				writeFile(t, filepath.Join(dir, "out.path"), []byte(out))
				return []string{p, "--force", "-o", out}
			},
			exit: 2, want: []string{"out: the output is a link to", "gone, which does not exist; scrub neither writes through a link nor replaces one, even with --force", "remove the link, or choose another name"},
			check: func(t *testing.T, dir string) {
				out := string(readFile(t, filepath.Join(dir, "out.path")))
				if st, err := os.Lstat(out); err != nil || st.Mode()&os.ModeSymlink == 0 {
					t.Errorf("the link was replaced: %v", err)
				}
			}},
		{group: "report output", name: "scrub -o a file in a folder that is a link to a file (once \"cannot check the output file: not a directory\")", cmd: "scrub",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.sqlite")
				other := t.TempDir()
				writeFile(t, filepath.Join(other, "notes.txt"), []byte("notes\n"))
				link := filepath.Join(other, "out")
				if err := os.Symlink(filepath.Join(other, "notes.txt"), link); err != nil {
					t.Fatal(err)
				}
				return []string{p, "-o", filepath.Join(link, "shared.sqlite")}
			},
			exit: 2, want: []string{"shared.sqlite: the output folder is a link to", "notes.txt, which is a file, not a folder", "name an output in a folder"},
			never: []string{"does not exist", "not a directory"}},
		{group: "report output", name: "scrub -o a file in a folder that is a file (once \"cannot check the output file: not a directory\")", cmd: "scrub",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.sqlite")
				other := t.TempDir()
				writeFile(t, filepath.Join(other, "out"), []byte("notes\n"))
				return []string{p, "-o", filepath.Join(other, "out", "shared.sqlite")}
			},
			exit: 2, want: []string{"shared.sqlite: the output folder", "out is a file, not a folder", "name an output in a folder"},
			never: []string{"does not exist", "not a directory"}},
	}
}
