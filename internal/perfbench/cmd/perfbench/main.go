// Command perfbench generates scaled-up captures into a scratch folder and
// measures, side by side and interleaved in one run so that machine noise
// falls on all alike:
//
//   - nsyscheck verify BIG.sqlite (the CLI binary)
//   - capture.LoadSQLite + predictions.Evaluate alone (the loadcapture probe)
//   - the sqlite3 shell running nsys's cuda_api_sum query (exact median),
//     and the same query without the median
//   - nsys stats --report cudaapisum, where nsys is installed
//   - nsyscheck audit BIG.sqlite, and the sqlite3 shell joining every copy
//     to its runtime call grouped by copy kind (the audit's speed target)
//
// and the one-core streaming rate of the cuda_api_trace CSV report through
// capture.LoadCSVDir; then, on captures of many small copies in the real
// 600,000-copy capture's shape (bigcapture.ManyCopies, -copies) and on
// captures given (-capture), nsyscheck audit without and with NVIDIA's rule
// beside it (through testdata/programs/nsys-rule-standin.sh) and verify
// against the sqlite3 shell's copy join. It prints the medians of wall time
// and peak RSS.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/bigcapture"
	"github.com/nsyscheck/nsyscheck/internal/perfbench"
)

type contender struct {
	name    string
	argv    func(c *scaled) []string
	stdin   string
	env     []string
	okExits map[int]bool
	skip    string // why it is not measured
	walls   map[int][]float64
	rss     map[int][]float64
	notes   map[int]string
}

type scaled struct {
	n   int
	res *bigcapture.Result
}

func main() {
	dir := flag.String("dir", filepath.Join(os.TempDir(), "nsyscheck-bench"), "scratch `folder` for the scaled captures")
	sizes := flag.String("sizes", "1000000,10000000", "comma-separated numbers of added API rows")
	reps := flag.Int("reps", 3, "repetitions of each contender per size (interleaved)")
	source := flag.String("source", bigcapture.DefaultSource, "capture to scale up")
	nsyscheck := flag.String("nsyscheck", "/tmp/nsyscheck", "nsyscheck binary (go build -o /tmp/nsyscheck ./cmd/nsyscheck)")
	probe := flag.String("loadcapture", "/tmp/loadcapture", "loadcapture binary (go build -o /tmp/loadcapture ./internal/perfbench/cmd/loadcapture)")
	nsys := flag.String("nsys", "nsys", "nsys executable for nsys stats; empty to skip")
	sqlite3 := flag.String("sqlite3", "sqlite3", "sqlite3 shell")
	only := flag.String("only", "", "comma-separated contender names to measure (default: all), e.g. 'nsyscheck audit,sqlite3 copy join'")
	reuse := flag.Bool("reuse", false, "reuse captures already generated in -dir (their generation figures are read from the JSON beside them)")
	copies := flag.String("copies", "", "comma-separated numbers of copies of the many-copies captures to generate in the real capture's shape (e.g. 600000)")
	manySource := flag.String("many-source", bigcapture.ManySource, "capture of many_copies that -copies repeats")
	given := flag.String("capture", "", "comma-separated exports of many copies to measure beside the generated ones (e.g. the real 600,000-copy capture)")
	standin := flag.String("rule-standin", "testdata/programs/nsys-rule-standin.sh", "stand-in for nsys analyze put on PATH as nsys for the audit with NVIDIA's rule beside it; empty to skip")
	flag.Parse()

	fmt.Printf("machine: %s/%s, %d CPUs (GOMAXPROCS %d)\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0))
	if strings.TrimSpace(*sizes) != "" {
		var caps []*scaled
		fmt.Println("\n== generation (one transaction, prepared multi-row INSERTs; CSV streamed in the same pass)")
		fmt.Printf("%-10s %10s %12s %12s %10s %10s %10s\n", "N", "gen (s)", "sqlite MiB", "csv MiB", "runtime", "memcpy", "kernels")
		for _, f := range strings.Split(*sizes, ",") {
			if strings.TrimSpace(f) == "" {
				continue
			}
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 0 {
				fatalf("bad -sizes entry %q", f)
			}
			res, err := generate(*dir, *source, n, *reuse)
			if err != nil {
				fatalf("%v", err)
			}
			caps = append(caps, &scaled{n, res})
			fmt.Printf("%-10d %10.2f %12.1f %12.1f %10d %10d %10d\n", n, res.Elapsed.Seconds(),
				float64(res.SQLiteBytes)/(1<<20), float64(res.CSVBytes)/(1<<20),
				res.SourceRuntime+res.AddedRuntime, res.AddedMemcpy, res.AddedKernels)
		}

		anyExit := map[int]bool{0: true}
		verdictExit := map[int]bool{0: true, 1: true} // 1: some claim died
		cs := []*contender{
			{name: "nsyscheck verify", argv: func(c *scaled) []string { return []string{*nsyscheck, "verify", c.res.SQLite} }, okExits: verdictExit},
			{name: "LoadSQLite+Evaluate", argv: func(c *scaled) []string { return []string{*probe, "-sqlite", c.res.SQLite} }, okExits: anyExit},
			{name: "sqlite3 cuda_api_sum", argv: func(c *scaled) []string { return []string{*sqlite3, "-csv", "-header", c.res.SQLite} },
				stdin: perfbench.QueryFull, okExits: anyExit},
			{name: "sqlite3 no median", argv: func(c *scaled) []string { return []string{*sqlite3, "-csv", "-header", c.res.SQLite} },
				stdin: perfbench.QueryNoMedian, okExits: anyExit},
			{name: "nsys stats cudaapisum", argv: func(c *scaled) []string {
				return []string{*nsys, "stats", "--report", "cudaapisum", "--format", "csv", c.res.SQLite}
			}, okExits: anyExit},
			{name: "nsyscheck audit", argv: func(c *scaled) []string {
				return []string{*nsyscheck, "audit", c.res.SQLite, "--format", "json", "--nvidia-rule", "off"}
			}, okExits: verdictExit},
			{name: "sqlite3 copy join", argv: func(c *scaled) []string { return []string{*sqlite3, "-csv", "-header", c.res.SQLite} },
				stdin: perfbench.QueryCopyJoin, okExits: anyExit},
		}
		if _, err := os.Stat(*nsyscheck); err != nil {
			cs[0].skip = "no binary at " + *nsyscheck
			cs[5].skip = cs[0].skip
		}
		if _, err := os.Stat(*probe); err != nil {
			cs[1].skip = "no binary at " + *probe
		}
		if _, err := exec.LookPath(*sqlite3); err != nil {
			cs[2].skip, cs[3].skip, cs[6].skip = "no sqlite3 shell", "no sqlite3 shell", "no sqlite3 shell"
		}
		if *nsys == "" {
			cs[4].skip = "skipped (-nsys '')"
		} else if _, err := exec.LookPath(*nsys); err != nil {
			cs[4].skip = "nsys not installed"
		}
		if *only != "" {
			want := map[string]bool{}
			for _, n := range strings.Split(*only, ",") {
				want[strings.TrimSpace(n)] = true
			}
			for _, c := range cs {
				if !want[c.name] && c.skip == "" {
					c.skip = "not asked for (-only)"
				}
			}
		}
		for _, c := range cs {
			c.walls, c.rss, c.notes = map[int][]float64{}, map[int][]float64{}, map[int]string{}
		}

		fmt.Printf("\n== runs (%d repetitions, interleaved)\n", *reps)
		for _, sc := range caps {
			for r := 0; r < *reps; r++ {
				for _, c := range cs {
					if c.skip != "" || c.notes[sc.n] != "" {
						continue
					}
					var in io.Reader
					if c.stdin != "" {
						in = perfbench.Stdin(c.stdin)
					}
					m := perfbench.Run(c.argv(sc), c.env, in)
					if m.Err != nil || !c.okExits[m.Exit] {
						c.notes[sc.n] = fmt.Sprintf("failed (exit %d %v): %s", m.Exit, m.Err, lastLine(m.Stderr))
						fmt.Printf("  N=%d %s: %s\n", sc.n, c.name, c.notes[sc.n])
						continue
					}
					c.walls[sc.n] = append(c.walls[sc.n], m.Wall.Seconds())
					c.rss[sc.n] = append(c.rss[sc.n], float64(m.MaxRSS)/(1<<20))
					fmt.Printf("  N=%d rep %d %-22s %8.2f s %8.1f MiB\n", sc.n, r+1, c.name, m.Wall.Seconds(), float64(m.MaxRSS)/(1<<20))
				}
			}
		}

		fmt.Println("\n== medians (ratio = wall time / nsyscheck verify's, or the loader probe's where verify is not measured;")
		fmt.Println("   nsyscheck audit's target: no slower than sqlite3 copy join, peak RSS < 256 MiB)")
		fmt.Printf("%-10s %-22s %10s %10s %12s\n", "N", "contender", "wall (s)", "ratio", "peak RSS MiB")
		for _, sc := range caps {
			base := perfbench.Median(cs[0].walls[sc.n])
			if base == 0 {
				base = perfbench.Median(cs[1].walls[sc.n])
			}
			for _, c := range cs {
				switch {
				case c.skip != "":
					fmt.Printf("%-10d %-22s %s\n", sc.n, c.name, c.skip)
				case c.notes[sc.n] != "":
					fmt.Printf("%-10d %-22s %s\n", sc.n, c.name, c.notes[sc.n])
				default:
					w := perfbench.Median(c.walls[sc.n])
					ratio := "-"
					if base > 0 {
						ratio = fmt.Sprintf("%.2fx", w/base)
					}
					fmt.Printf("%-10d %-22s %10.2f %10s %12.1f\n", sc.n, c.name, w, ratio, perfbench.Median(c.rss[sc.n]))
				}
			}
		}

		fmt.Println("\n== CSV cuda_api_trace through capture.LoadCSVDir, GOMAXPROCS=1 (load time measured inside the process)")
		fmt.Printf("%-10s %12s %10s %12s %12s\n", "N", "rows", "load (s)", "rows/s", "peak RSS MiB")
		_, noProbe := os.Stat(*probe)
		if noProbe != nil {
			fmt.Println("no loadcapture binary at", *probe)
		}
		for _, sc := range caps {
			if sc.res.CSVDir == "" || noProbe != nil {
				continue
			}
			var secs, rss []float64
			for r := 0; r < *reps; r++ {
				m := perfbench.Run([]string{*probe, "-csvdir", sc.res.CSVDir, "-eval=false"}, []string{"GOMAXPROCS=1"}, nil)
				if m.Err != nil || m.Exit != 0 {
					fmt.Printf("%-10d failed (exit %d): %s\n", sc.n, m.Exit, lastLine(m.Stderr))
					break
				}
				var out struct {
					LoadSec float64 `json:"loadSec"`
				}
				if err := json.Unmarshal([]byte(m.Stdout), &out); err != nil {
					fmt.Printf("%-10d unreadable probe output: %v\n", sc.n, err)
					break
				}
				secs = append(secs, out.LoadSec)
				rss = append(rss, float64(m.MaxRSS)/(1<<20))
			}
			if len(secs) > 0 {
				s := perfbench.Median(secs)
				fmt.Printf("%-10d %12d %10.2f %12.0f %12.1f\n", sc.n, sc.res.CSVRows, s, float64(sc.res.CSVRows)/s, perfbench.Median(rss))
			}
		}
	}

	var many []copiesCapture
	for _, f := range strings.Split(*copies, ",") {
		if strings.TrimSpace(f) == "" {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			fatalf("bad -copies entry %q", f)
		}
		c, err := generateCopies(*dir, *manySource, n, *reuse)
		if err != nil {
			fatalf("%v", err)
		}
		many = append(many, c)
	}
	for _, p := range strings.Split(*given, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			fmt.Printf("-capture %s: %v (skipped)\n", p, err)
			continue
		}
		many = append(many, copiesCapture{label: filepath.Base(p), sqlite: p})
	}
	if len(many) > 0 {
		ruleDir, err := ruleStandIn(*dir, *standin)
		if err != nil {
			fatalf("%v", err)
		}
		if over := benchCopies(many, *reps, *nsyscheck, *sqlite3, ruleDir); len(over) > 0 {
			fmt.Fprintf(os.Stderr, "perfbench: over the %d MiB peak RSS target:\n  %s\n", peakMiB, strings.Join(over, "\n  "))
			os.Exit(1)
		}
	}
}

// generate writes (or with reuse, finds) the capture with n added rows.
func generate(dir, source string, n int, reuse bool) (*bigcapture.Result, error) {
	name := fmt.Sprintf("big-%d", n)
	meta := filepath.Join(dir, name+".json")
	if reuse {
		if b, err := os.ReadFile(meta); err == nil {
			var res bigcapture.Result
			if json.Unmarshal(b, &res) == nil {
				if _, err := os.Stat(res.SQLite); err == nil {
					return &res, nil
				}
			}
		}
	}
	fmt.Fprintf(os.Stderr, "generating %s in %s ...\n", name, dir)
	res, err := bigcapture.Generate(bigcapture.Config{Source: source, OutDir: dir, Name: name, Runtime: n, Seed: 1})
	if err != nil {
		return nil, err
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(meta, b, 0o644); err != nil {
		return nil, err
	}
	return res, nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return string(bytes.TrimSpace([]byte(s)))
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "perfbench: "+format+"\n", args...)
	os.Exit(2)
}
