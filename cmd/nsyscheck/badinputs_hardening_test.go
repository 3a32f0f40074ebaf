package main

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// hardeningCases: names that hold credentials of every format or terminal
// escapes, rates that would overflow the audit's prediction, --expect files
// that say one thing twice, and report folders of captures with the same
// name: each refused or answered without printing a secret or a raw escape
// and without mixing captures up.
func hardeningCases() []badCase {
	off := []string{"--nvidia-rule", "off"}
	secrets := formatSecretValues()
	escapes := "\x1b\x07\r"
	cases := []badCase{
		{group: "names that hold secrets or terminal escapes", name: `a GPU name holding ESC ] (window title), BEL, ESC [2J (clear screen) and CR, printed as \x1b]0;pwned\x07\x1b[2JNVIDIA H200`,
			make: sqliteEdit(`UPDATE TARGET_INFO_GPU SET name = char(27) || ']0;pwned' || char(7) || char(27) || '[2JNVIDIA H200' || char(13)`),
			exit: 0, want: []string{`\x1b]0;pwned\x07\x1b[2JNVIDIA H200`, "prediction 4 held"}, never: []string{escapes[:1], escapes[1:2]}},
		{group: "names that hold secrets or terminal escapes", name: "NVTX range names holding AWS keys, Google and Stripe keys, a JWT, a bearer token, npm, GitHub and Slack tokens and a private key; a password in a thread name; tokens in a table's and a column's name",
			make: sqliteEdit(plantFormatsSQL("")),
			exit: 0, want: []string{"(AWS access key id)=AKIA…(20 chars)", "(JWT)=eyJ…", "(private key)=…(", "in the schema: table"},
			never: secrets},
		{group: "names that hold secrets or terminal escapes", name: "verify --fail-on-exposure: a GitHub token in a table's name only",
			make: func(t *testing.T, dir string) []string {
				return append(sqliteEdit(`CREATE TABLE "notes_`+formatSecrets["table name token"]+`" (x INTEGER)`)(t, dir), "--fail-on-exposure")
			},
			exit: 3, want: []string{"(GitHub token)=ghp_…(40 chars) in the schema: table", "(its name)"}, never: secrets},
		{group: "names that hold secrets or terminal escapes", name: "scrub: tokens in a table's and a column's name, and in NVTX range names",
			cmd: "scrub",
			make: func(t *testing.T, dir string) []string {
				p := sqliteEdit(plantFormatsSQL(""))(t, dir)[0]
				return []string{p, "-o", filepath.Join(dir, "shared.sqlite")}
			},
			mayWrite: true, exit: 0, want: []string{"shared.sqlite: removed or redacted"}, never: secrets,
			check: func(t *testing.T, dir string) {
				data := string(readFile(t, filepath.Join(dir, "shared.sqlite")))
				for _, s := range secrets {
					if strings.Contains(data, s) {
						t.Errorf("the scrubbed copy holds %q", s)
					}
				}
			}},
		{group: "names that hold secrets or terminal escapes", name: "scrub: a process on a second host with the profiled program's pid 22 (once kept as the program)",
			cmd: "scrub",
			make: func(t *testing.T, dir string) []string {
				p := sqliteEdit(secondHostPIDSQL)(t, dir)[0]
				return []string{p, "-o", filepath.Join(dir, "shared.sqlite")}
			},
			mayWrite: true, exit: 0, want: []string{"removed or redacted 1 finding", "wallet-sync (PROCESSES pid 22 globalPid 216172782482882560)"},
			check: func(t *testing.T, dir string) {
				db := openRW(t, filepath.Join(dir, "shared.sqlite"))
				defer db.Close()
				var others, program, calls int
				if err := db.QueryRow(`SELECT (SELECT count(*) FROM PROCESSES WHERE name LIKE '%wallet-sync%'), (SELECT count(*) FROM PROCESSES WHERE name = './pinned'), (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME)`).Scan(&others, &program, &calls); err != nil {
					t.Fatal(err)
				}
				if others != 0 || program != 1 || calls == 0 {
					t.Errorf("the scrubbed copy holds %d second-host processes, %d profiled programs, %d runtime calls; want 0, 1, >0", others, program, calls)
				}
			}},
		{group: "names that hold secrets or terminal escapes", name: "verify: beside a second host's pid 22, a child of the profiled program (pid 30, its host) and pid 30 on the second host (once both named)",
			make: sqliteEdit(secondHostPIDSQL + "; " + childPIDsSQL),
			exit: 0, want: []string{"miner (PROCESSES pid 30 globalPid 216172782617100288)", "wallet-sync (PROCESSES pid 22 globalPid 216172782482882560)", "prediction 4 held"},
			never: []string{"pinned-worker"}},
		{group: "names that hold secrets or terminal escapes", name: "scrub: beside a second host's pid 22, a child of the profiled program and pid 30 on the second host (the child kept, the other removed)",
			cmd: "scrub",
			make: func(t *testing.T, dir string) []string {
				p := sqliteEdit(secondHostPIDSQL+"; "+childPIDsSQL)(t, dir)[0]
				return []string{p, "-o", filepath.Join(dir, "shared.sqlite")}
			},
			mayWrite: true, exit: 0, want: []string{"removed or redacted 2 findings", "miner (PROCESSES pid 30 globalPid 216172782617100288)"},
			check: func(t *testing.T, dir string) {
				db := openRW(t, filepath.Join(dir, "shared.sqlite"))
				defer db.Close()
				var others, child int
				if err := db.QueryRow(`SELECT (SELECT count(*) FROM PROCESSES WHERE name LIKE '%miner%' OR name LIKE '%wallet-sync%'), (SELECT count(*) FROM PROCESSES WHERE name = './pinned-worker')`).Scan(&others, &child); err != nil {
					t.Fatal(err)
				}
				if others != 0 || child != 1 {
					t.Errorf("the scrubbed copy holds %d second-host processes and %d children of the program; want 0 and 1", others, child)
				}
			}},
		{group: "names that hold secrets or terminal escapes", name: "verify: a process on a second host with the profiled program's pid 22 (once not named as an exposure)",
			make: sqliteEdit(secondHostPIDSQL),
			exit: 0, want: []string{"wallet-sync (PROCESSES pid 22 globalPid 216172782482882560)", "prediction 4 held"}},
	}
	for _, format := range []string{"text", "json"} {
		cases = append(cases, badCase{group: "names that hold secrets or terminal escapes",
			name: "audit --format " + format + ": a private key and other credentials in NVTX range names (the class key names the range)",
			cmd:  "audit", make: func(t *testing.T, dir string) []string {
				p := filepath.Join(dir, "train.sqlite")
				writeFile(t, p, readFile(t, "../../testdata/captures/train-pageable/train-pageable.sqlite"))
				db := openRW(t, p)
				mustExec(t, db, plantFormatsSQL("step"))
				db.Close()
				return append([]string{p, "--format", format}, off...)
			},
			exit: 1, want: []string{"…(122 chars)"}, never: secrets})
	}
	cases = append(cases,
		badCase{group: "audit rates and --expect files", name: "audit --link-gbps 1e-300 (a prediction of -9.2e18 ns)", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				return append([]string{copyShipped(t, dir, "pinned.sqlite"), "--link-gbps", "1e-300"}, off...)
			},
			exit: 2, want: []string{"--link-gbps 1e-300: give a rate in GB/s between 0.01 and 450"}},
		badCase{group: "audit rates and --expect files", name: "audit --link-gbps 4000 (faster than any host link)", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				return append([]string{copyShipped(t, dir, "pinned.sqlite"), "--link-gbps", "4000"}, off...)
			},
			exit: 2, want: []string{"--link-gbps 4000: give a rate in GB/s between 0.01 and 450 (NVLink-C2C, the fastest host link there is"}},
		badCase{group: "audit rates and --expect files", name: "audit --link-gbps NaN", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				return append([]string{copyShipped(t, dir, "pinned.sqlite"), "--link-gbps", "NaN"}, off...)
			},
			exit: 2, want: []string{"--link-gbps NaN: give a rate in GB/s between 0.01 and 450"}},
		badCase{group: "audit rates and --expect files", name: "audit --expect with a key given twice", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				e := filepath.Join(dir, "expect.json")
				writeFile(t, e, []byte(`{"copies": 40, "findings": {"secretly-synchronous": 11, "secretly-synchronous": 0}}`))
				return append([]string{copyShipped(t, dir, "pinned.sqlite"), "--expect", e}, off...)
			},
			exit: 2, want: []string{"expect.json", "findings.secretly-synchronous is given twice"}},
		badCase{group: "audit rates and --expect files", name: "verify --expect with a key given twice",
			make: func(t *testing.T, dir string) []string {
				e := filepath.Join(dir, "expect.json")
				writeFile(t, e, []byte(`{"claims": {"1.floor": "died", "1.floor": "held"}}`))
				return []string{copyShipped(t, dir, "pinned.sqlite"), "--expect", e}
			},
			exit: 2, want: []string{"expect.json", "claims.1.floor is given twice"}},
	)
	return cases
}

// formatSecretValues are formatSecrets' values, in a fixed order.
func formatSecretValues() []string {
	var out []string
	for _, v := range formatSecrets {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// secondHostPIDSQL lists a process on hardware id 3 whose pid (22) is the
// profiled program's: told apart only by its globalPid's host bits.
// childPIDsSQL adds pid 30 twice: a child of the profiled program on its
// host (pid 22 made threads up to 39) and a process of the second host.
const childPIDsSQL = `INSERT INTO PROCESSES (globalPid, pid, name) VALUES (281475480027136, 30, './pinned-worker'), (216172782617100288, 30, '/home/alice/bin/miner')`

const secondHostPIDSQL = `INSERT INTO PROCESSES (globalPid, pid, name) VALUES (216172782482882560, 22, '/home/alice/bin/wallet-sync')`
