package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/nsyscheck/nsyscheck/internal/bigcapture"
	"github.com/nsyscheck/nsyscheck/internal/perfbench"
)

// The targets of the many-copies captures, against the sqlite3 shell's one
// join of the copies to their calls in the same run.
const (
	auditVsJoin  = 1.5
	verifyVsJoin = 3.0
	peakMiB      = 256
)

// copiesCapture is one capture of many small copies: generated in the
// real one's shape (bigcapture.ManyCopies), or given (-capture).
type copiesCapture struct {
	label  string
	sqlite string
}

// benchCopies measures, interleaved, nsyscheck audit (without NVIDIA's
// rule, with the rule answered from its own records, and with it run
// beside it through the stand-in for nsys analyze),
// nsyscheck verify and the sqlite3 shell's copy join on each capture, and
// prints the medians against the targets. It returns the runs of nsyscheck
// whose median peak RSS is over peakMiB (the check make bench fails on;
// the times are shown, not checked, since other work on the machine moves
// them).
func benchCopies(caps []copiesCapture, reps int, nsyscheck, sqlite3, ruleDir string) (over []string) {
	type run struct {
		name  string
		argv  func(c copiesCapture) []string
		stdin string
		env   []string
		skip  string
	}
	audit := func(c copiesCapture) []string { return []string{nsyscheck, "audit", c.sqlite, "--format", "json"} }
	var onPath []string
	if ruleDir != "" {
		onPath = []string{"PATH=" + ruleDir + string(os.PathListSeparator) + os.Getenv("PATH")}
	}
	runs := []*run{
		{name: "sqlite3 copy join", argv: func(c copiesCapture) []string { return []string{sqlite3, "-csv", "-header", c.sqlite} },
			stdin: perfbench.QueryCopyJoin},
		{name: "nsyscheck audit", argv: func(c copiesCapture) []string { return append(audit(c), "--nvidia-rule", "off") }},
		// nsys on PATH (the stand-in) for both: by default the audit runs
		// none, so the first is within 10% of the audit alone.
		{name: "audit, rule scanned", argv: audit, env: onPath},
		{name: "audit, rule by nsys", argv: func(c copiesCapture) []string { return append(audit(c), "--nvidia-rule", "nsys") }, env: onPath},
		{name: "nsyscheck verify", argv: func(c copiesCapture) []string { return []string{nsyscheck, "verify", c.sqlite} }},
	}
	if _, err := exec.LookPath(sqlite3); err != nil {
		runs[0].skip = "no sqlite3 shell"
	}
	if _, err := os.Stat(nsyscheck); err != nil {
		for _, r := range runs[1:] {
			r.skip = "no binary at " + nsyscheck
		}
	}
	if ruleDir == "" {
		runs[3].skip = "no stand-in for nsys analyze (-rule-standin)"
	}
	walls := map[string][]float64{}
	cpus := map[string][]float64{}
	rss := map[string][]float64{}
	notes := map[string]string{}
	key := func(c copiesCapture, r *run) string { return c.label + "\x00" + r.name }

	fmt.Printf("\n== many small copies, the real capture's shape (%d repetitions, interleaved)\n", reps)
	for rep := 0; rep < reps; rep++ {
		for _, c := range caps {
			for _, r := range runs {
				k := key(c, r)
				if r.skip != "" || notes[k] != "" {
					continue
				}
				var in io.Reader
				if r.stdin != "" {
					in = perfbench.Stdin(r.stdin)
				}
				m := perfbench.Run(r.argv(c), r.env, in)
				// audit and verify exit 1 when the copies break the rule
				// or a claim died: an answer, not a failure.
				if m.Err != nil || m.Exit > 1 || (r.stdin != "" && m.Exit != 0) {
					notes[k] = fmt.Sprintf("failed (exit %d %v): %s", m.Exit, m.Err, lastLine(m.Stderr))
					fmt.Printf("  %s %s: %s\n", c.label, r.name, notes[k])
					continue
				}
				walls[k] = append(walls[k], m.Wall.Seconds())
				cpus[k] = append(cpus[k], m.CPU.Seconds())
				rss[k] = append(rss[k], float64(m.MaxRSS)/(1<<20))
				fmt.Printf("  %s rep %d %-20s %8.2f s %8.2f s CPU %8.1f MiB\n", c.label, rep+1, r.name, m.Wall.Seconds(), m.CPU.Seconds(),
					float64(m.MaxRSS)/(1<<20))
			}
		}
	}

	fmt.Printf("\n== medians (ratio = wall time / the sqlite3 copy join's in the same run; targets: audit <= %.1fx,\n", auditVsJoin)
	fmt.Printf("   verify <= %.1fx, each under %d MiB; the audit with the rule answered from its records within 10%% of without)\n", verifyVsJoin, peakMiB)
	fmt.Println("   CPU: user and system time, which other work on the machine moves less than the wall time")
	fmt.Printf("%-24s %-20s %9s %7s %8s %7s %12s  %s\n", "capture", "contender", "wall (s)", "ratio", "CPU (s)", "ratio", "peak RSS MiB", "target")
	for _, c := range caps {
		join := perfbench.Median(walls[key(c, runs[0])])
		joinCPU := perfbench.Median(cpus[key(c, runs[0])])
		alone := perfbench.Median(walls[key(c, runs[1])])
		for i, r := range runs {
			k := key(c, r)
			switch {
			case r.skip != "":
				fmt.Printf("%-24s %-20s %s\n", c.label, r.name, r.skip)
				continue
			case notes[k] != "":
				fmt.Printf("%-24s %-20s %s\n", c.label, r.name, notes[k])
				continue
			}
			w, cpu, mem := perfbench.Median(walls[k]), perfbench.Median(cpus[k]), perfbench.Median(rss[k])
			ratio, cpuRatio := "-", "-"
			if join > 0 {
				ratio = fmt.Sprintf("%.2fx", w/join)
			}
			if joinCPU > 0 {
				cpuRatio = fmt.Sprintf("%.2fx", cpu/joinCPU)
			}
			target := ""
			switch i {
			case 1:
				target = met(join > 0 && w <= auditVsJoin*join && mem < peakMiB)
			case 2:
				target = met(alone > 0 && w <= 1.1*alone && mem < peakMiB) + fmt.Sprintf(" (%+.0f%% on the audit alone)", 100*(w/alone-1))
			case 3:
				target = fmt.Sprintf("(%+.0f%% on the audit alone: it waits for nsys analyze)", 100*(w/alone-1))
			case 4:
				target = met(join > 0 && w <= verifyVsJoin*join && mem < peakMiB)
			}
			fmt.Printf("%-24s %-20s %9.2f %7s %8.2f %7s %12.1f  %s\n", c.label, r.name, w, ratio, cpu, cpuRatio, mem, target)
			if i > 0 && mem >= peakMiB {
				over = append(over, fmt.Sprintf("%s on %s: peak RSS %.0f MiB", r.name, c.label, mem))
			}
		}
	}
	return over
}

// met words whether a target is met.
func met(ok bool) string {
	if ok {
		return "met"
	}
	return "missed"
}

// generateCopies writes (or with reuse, finds) the capture of n copies in
// the real capture's shape.
func generateCopies(dir, source string, n int, reuse bool) (copiesCapture, error) {
	name := "many-" + strconv.Itoa(n)
	meta := filepath.Join(dir, name+".json")
	c := copiesCapture{label: fmt.Sprintf("generated %d", n)}
	if reuse {
		if b, err := os.ReadFile(meta); err == nil {
			var res bigcapture.ManyResult
			if json.Unmarshal(b, &res) == nil {
				if _, err := os.Stat(res.SQLite); err == nil {
					c.sqlite = res.SQLite
					return c, nil
				}
			}
		}
	}
	fmt.Fprintf(os.Stderr, "generating %s in %s ...\n", name, dir)
	res, err := bigcapture.ManyCopies(bigcapture.ManyConfig{Source: source, OutDir: dir, Name: name, Copies: n})
	if err != nil {
		return c, err
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(meta, b, 0o644); err != nil {
		return c, err
	}
	fmt.Printf("generated %s: %d copies, %.1f MiB, %.2f s\n", res.SQLite, res.Copies, float64(res.SQLiteBytes)/(1<<20), res.Elapsed.Seconds())
	c.sqlite = res.SQLite
	return c, nil
}

// ruleStandIn makes a folder in dir whose nsys is the stand-in script, to
// put first on PATH; "" where there is no script.
func ruleStandIn(dir, script string) (string, error) {
	if script == "" {
		return "", nil
	}
	abs, err := filepath.Abs(script)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(abs); err != nil {
		return "", fmt.Errorf("the stand-in for nsys analyze: %w", err)
	}
	bin := filepath.Join(dir, "rule-standin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return "", err
	}
	link := filepath.Join(bin, "nsys")
	_ = os.Remove(link)
	if err := os.Symlink(abs, link); err != nil {
		return "", err
	}
	return bin, nil
}
