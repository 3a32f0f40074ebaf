package check

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/nsyscheck/nsyscheck/auditjson"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/ranks"
	"github.com/nsyscheck/nsyscheck/source"
)

// RanksOptions configure the audit of a distributed job's captures.
type RanksOptions struct {
	AuditOptions
	// Jobs is how many captures are audited at once (0: the machine's
	// cores). Each holds its capture's timeline while it is audited.
	Jobs int
	// Thresholds decide which ranks stand out (zero: ranks.DefaultThresholds).
	Thresholds ranks.Thresholds
	// Asked names the request in messages about the paths given: "--ranks"
	// (audit's flag, the default) or "report" (which merges shards' JSON).
	Asked string
}

// AuditRanks audits each capture the arguments name (source.Captures: a
// capture, a folder of them, a pattern; or the JSON of earlier audits of
// ranks, read back whole, for the one table of a job audited in shards)
// on a pool of opts.Jobs workers, and sets them side by side
// (ranks.Summarize). A capture that cannot be audited is a row of its own,
// saying why; it does not stop the others. The audits come in the order of
// the arguments; the rows in rank order.
func AuditRanks(ctx context.Context, args []string, opts RanksOptions) (*ranks.Summary, []ranks.Audited, error) {
	rates, err := AuditRates(opts.AuditOptions)
	if err != nil {
		return nil, nil, err
	}
	if opts.PinBy != "" || opts.FailAbove != nil || len(opts.Match) > 0 {
		return nil, nil, errors.New("--ranks sets each rank's audit beside its peers': --pin-by, --fail-above and --match are for one capture or one pair")
	}
	// The slots of the results, in the order of the arguments: a capture
	// to audit, or what an audit's JSON held.
	var todo []ranks.Audited
	var paths []int
	// shown names each slot in a message: its capture, and the JSON it was
	// read from, which is what was given.
	var shown []string
	asked := opts.Asked
	if asked == "" {
		asked = "--ranks"
	}
	// jsons are the shards' JSON files read so far, to tell one given twice.
	type given struct {
		path string
		info os.FileInfo
	}
	var jsons []given
	for _, arg := range args {
		if audits, failed, ok, err := auditjson.ReadRanks(arg); ok {
			if err != nil {
				return nil, nil, err
			}
			if st, err := os.Stat(arg); err == nil {
				for _, g := range jsons {
					switch {
					case !os.SameFile(g.info, st):
					case g.path == arg:
						return nil, nil, fmt.Errorf("%s: %s is given twice, and each of its ranks with it: give each shard's JSON once", asked, arg)
					default:
						return nil, nil, fmt.Errorf("%s: %s and %s are one file (by a link), the JSON of one shard, whose ranks would each count twice: give each shard's JSON once", asked, g.path, arg)
					}
				}
				jsons = append(jsons, given{arg, st})
			}
			for _, au := range audits {
				todo = append(todo, ranks.Audited{Capture: au.Capture, Audit: au})
				shown = append(shown, au.Capture+" (audited in "+arg+")")
			}
			for _, f := range failed {
				todo = append(todo, ranks.Audited{Capture: f.Capture, Err: errors.New(f.Err)})
				shown = append(shown, f.Capture+" (in "+arg+")")
			}
			continue
		}
		cs, err := source.Captures(arg)
		if err != nil {
			return nil, nil, err
		}
		for _, c := range cs {
			paths = append(paths, len(todo))
			todo = append(todo, ranks.Audited{Capture: c})
			shown = append(shown, c)
		}
	}
	if len(todo) == 0 {
		return nil, nil, fmt.Errorf("%s: no capture to audit", asked)
	}
	seen := map[string]string{}
	for i, a := range todo {
		r := ranks.RankOf(a.Capture)
		if first, ok := seen[r]; ok {
			return nil, nil, fmt.Errorf("%s: rank %s is given twice, as %s and as %s (%s): give each rank's capture once (a shard's JSON holds its ranks' audits), or name each by its own rank", asked, r, first, shown[i], ranks.RankRule)
		}
		seen[r] = shown[i]
	}
	if err := oneFileTwice(asked, todo, paths); err != nil {
		return nil, nil, err
	}
	jobs := opts.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(jobs, max(len(paths), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				a := &todo[i]
				a.Audit, a.Err = AuditCapture(ctx, a.Capture, rates, opts.AuditOptions)
			}
		}()
	}
	for _, i := range paths {
		if ctx.Err() != nil {
			break
		}
		work <- i
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("auditing the ranks: %w", context.Cause(ctx))
	}
	if err := oneSessionTwice(asked, todo, shown); err != nil {
		return nil, nil, err
	}
	if err := oneTraceTwice(asked, todo, shown); err != nil {
		return nil, nil, err
	}
	th := opts.Thresholds
	if th == (ranks.Thresholds{}) {
		th = ranks.DefaultThresholds
	}
	s := ranks.Summarize(todo, th)
	return &s, todo, nil
}

// oneFileTwice refuses two ranks whose captures are one file (a link to
// another rank's capture, or a hard link): the slots at paths of todo.
func oneFileTwice(asked string, todo []ranks.Audited, paths []int) error {
	type file struct {
		capture string
		info    os.FileInfo
	}
	var files []file
	for _, i := range paths {
		st, err := os.Stat(todo[i].Capture)
		if err != nil {
			continue // its audit says why
		}
		for _, f := range files {
			if os.SameFile(f.info, st) {
				return fmt.Errorf("%s: ranks %s and %s are one capture, given as %s and as %s (one file, by a link): give each rank's own capture",
					asked, ranks.RankOf(f.capture), ranks.RankOf(todo[i].Capture), f.capture, todo[i].Capture)
			}
		}
		files = append(files, file{todo[i].Capture, st})
	}
	return nil
}

// oneSessionTwice refuses two ranks whose audits are of one capture
// session: sessions that started at the same nanosecond are one (a rank's
// capture copied under another rank's name). shown names each slot.
func oneSessionTwice(asked string, todo []ranks.Audited, shown []string) error {
	first := map[int64]int{}
	for i, a := range todo {
		if a.Audit == nil || a.Audit.SessionStartNs <= 0 {
			continue
		}
		if j, ok := first[a.Audit.SessionStartNs]; ok {
			return fmt.Errorf("%s: ranks %s and %s are one capture: %s and %s record one session, started at the same nanosecond (%d ns since 1970): give each rank's own capture",
				asked, ranks.RankOf(todo[j].Capture), ranks.RankOf(a.Capture), shown[j], shown[i], a.Audit.SessionStartNs)
		}
		first[a.Audit.SessionStartNs] = i
	}
	return nil
}

// oneTraceTwice refuses two ranks whose captures name no session start
// (folders of CSV reports) and whose API traces are one, byte for byte: a
// rank's reports copied under another rank's name, where two ranks' traces
// never agree to the nanosecond. Only traces of one size are read and
// compared; audits read back from a shard's JSON are compared where their
// reports are at hand.
func oneTraceTwice(asked string, todo []ranks.Audited, shown []string) error {
	traces := make([]string, len(todo))
	sizes := make([]int64, len(todo))
	ofSize := map[int64]int{} // traces of each size
	for i, a := range todo {
		if a.Audit == nil || a.Audit.SessionStartNs > 0 {
			continue
		}
		for _, f := range a.Audit.Files {
			if strings.HasSuffix(f, "_"+nsysdb.ReportAPITrace+".csv") {
				traces[i] = f
			}
		}
		if st, err := os.Stat(traces[i]); traces[i] != "" && err == nil {
			sizes[i] = st.Size()
			ofSize[sizes[i]]++
		} else {
			traces[i] = "" // a report no longer there: nothing to compare
		}
	}
	first := map[[sha256.Size]byte]int{}
	for i, trace := range traces {
		if trace == "" || ofSize[sizes[i]] < 2 {
			continue
		}
		sum, err := fileSum(trace)
		if err != nil {
			continue
		}
		if j, ok := first[sum]; ok {
			return fmt.Errorf("%s: ranks %s and %s are one capture: %s and %s hold the same API trace, byte for byte, where two ranks' calls never agree to the nanosecond: give each rank's own capture",
				asked, ranks.RankOf(todo[j].Capture), ranks.RankOf(todo[i].Capture), shown[j], shown[i])
		}
		first[sum] = i
	}
	return nil
}

// fileSum is the SHA-256 of the file at path.
func fileSum(path string) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	f, err := os.Open(path)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return sum, err
	}
	copy(sum[:], h.Sum(nil))
	return sum, nil
}
