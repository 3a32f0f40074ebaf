// Package runner does the GPU half of nsyscheck's job: it builds the bundled
// CUDA program for the GPU that is present, profiles it with Nsight Systems,
// exports the SQLite and CSV reports, and records everything in a run folder
// with a run.json that says what ran, with which tools, and how long it took.
package runner

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	_ "github.com/mattn/go-sqlite3" // SQLite driver for compaction

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/internal/regular"
	"github.com/nsyscheck/nsyscheck/kernels"
	"github.com/nsyscheck/nsyscheck/runinfo"
)

// Options configure a run.
type Options struct {
	// Dir is the run folder to create; it must not exist. Empty means
	// ./nsyscheck-runs/<UTC timestamp>.
	Dir string
	// Nsys and Nvcc override where the tools are looked for.
	Nsys, Nvcc string
	// Arch overrides the GPU architecture nvcc builds for (e.g. sm_90).
	Arch string
	// KeepEnv names caller variables passed to the profiled program beyond
	// the allowlist (PATH, LD_LIBRARY_PATH, HOME, CUDA_*, NSYS_*).
	KeepEnv []string
	// NoPIDNamespace turns off the private PID namespace.
	NoPIDNamespace bool
	// Progress receives one line per step as it starts and ends; nil is quiet.
	Progress io.Writer
	// Warn receives warnings a user should see even without progress lines
	// (e.g. that the capture could not be isolated); nil drops them.
	Warn io.Writer
	// Now is the clock (tests set it); nil means time.Now.
	Now func() time.Time
	// GPU is the GPU to run on, as ListGPUs describes it; nil means GPU 0
	// as nvidia-smi numbers them. The program sees this GPU alone.
	GPU *runinfo.GPU
	// NoWait fails the run at once when another nsyscheck run holds the
	// GPU's lock, instead of waiting for it.
	NoWait bool
	// LockDir is the folder of the per-GPU lock files; empty means
	// $NSYSCHECK_LOCK_DIR or nsyscheck-locks in the temporary folder.
	LockDir string
	// SysRoot is where sysfs is mounted (default /sys), for the GPU's NUMA
	// node.
	SysRoot string
	// NoBind leaves the program unbound to the GPU's NUMA node.
	NoBind bool
	// SampleApart is how far apart the GPU's utilisation is sampled
	// (three samples before profiling, two right after); 0 means
	// DefaultSampleApart.
	SampleApart time.Duration
}

// DefaultSampleApart is how far apart the GPU's utilisation samples are
// unless Options.SampleApart says otherwise.
const DefaultSampleApart = 200 * time.Millisecond

// sampleApart is Options.SampleApart, or its default.
func (o *Options) sampleApart() time.Duration {
	if o.SampleApart > 0 {
		return o.SampleApart
	}
	return DefaultSampleApart
}

// Run is a run folder being filled.
type Run struct {
	Dir  string
	Info runinfo.Info
	mu   sync.Mutex // guards Info and run.json while steps run side by side
	opts Options
	now  func() time.Time
	bind []string  // the NUMA binding prefix of the profile step
	held *heldLock // the GPU lock while the run profiles
}

// StepError is a run that stopped in a step.
type StepError struct {
	Step string
	Err  error
}

func (e *StepError) Error() string { return fmt.Sprintf("step %q failed: %v", e.Step, e.Err) }

func (e *StepError) Unwrap() error { return e.Err }

// ProgramError is the bundled program failing: a CUDA error or a failed
// correctness gate. Message holds the program's own words.
type ProgramError struct {
	ExitCode int
	Message  string
}

func (e *ProgramError) Error() string {
	what := "the program failed"
	switch e.ExitCode {
	case 2:
		what = "the program hit a CUDA error"
	case 3:
		what = "a correctness gate of the program failed"
	}
	if e.Message == "" {
		return fmt.Sprintf("%s (exit status %d)", what, e.ExitCode)
	}
	return fmt.Sprintf("%s (exit status %d): %s", what, e.ExitCode, e.Message)
}

// LinkToNothing refuses a run folder that is a symbolic link to nothing:
// a run makes its folder new and never writes through a link.
func LinkToNothing(dir string) error {
	if target, ok := regular.DanglingLink(dir); ok {
		return fmt.Errorf("run folder %s is a link to %s, which does not exist; nsyscheck makes a new folder and never writes through a link: remove the link, or pass another --out", dir, target)
	}
	return nil
}

// New creates the run folder and its run.json (status "running") and an
// INCOMPLETE marker that only a finished run removes. It never reuses an
// existing folder.
func New(opts Options, version string) (*Run, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	dir := opts.Dir
	if dir == "" {
		dir = filepath.Join("nsyscheck-runs", now().UTC().Format("20060102-150405"))
	}
	// Tools run inside the folder and are given paths in it: make them
	// absolute, so they name the same files from there.
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("create the folder for runs: %w", err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, os.ErrExist) {
			if err := LinkToNothing(dir); err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("run folder %s already exists; nsyscheck never overwrites a run: pass another --out", dir)
		}
		return nil, fmt.Errorf("create run folder: %w", err)
	}
	r := &Run{Dir: dir, opts: opts, now: now}
	r.Info = runinfo.Info{Status: "running", Started: now().UTC(), Nsyscheck: version}
	r.Info.Host, _ = os.Hostname()
	marker := "This run did not finish; run.json says which step it reached.\n"
	if err := os.WriteFile(filepath.Join(dir, runinfo.IncompleteFile), []byte(marker), 0o644); err != nil {
		return nil, fmt.Errorf("write %s: %w", runinfo.IncompleteFile, err)
	}
	if err := r.save(); err != nil {
		return nil, err
	}
	return r, nil
}

// Path returns the path of a file inside the run folder.
func (r *Run) Path(name string) string { return filepath.Join(r.Dir, name) }

// Facts returns a copy of the run's facts (what run.json holds) as they
// stand now, safe to read while other steps run.
func (r *Run) Facts() runinfo.Info {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.Info
}

func (r *Run) progress(format string, args ...any) {
	if r.opts.Progress != nil {
		fmt.Fprintf(r.opts.Progress, format+"\n", args...)
	}
}

// Step runs fn as a named, timed step, records it in run.json and turns a
// failure into a *StepError naming the step.
func (r *Run) Step(ctx context.Context, name string, fn func(s *runinfo.Step) error) error {
	s := runinfo.Step{Name: name}
	start := time.Now()
	r.progress("• %-8s …", name)
	err := fn(&s)
	if ctx.Err() != nil {
		// A program stopped by Ctrl-C or --timeout fails as killed: the
		// step stopped, it did not fail of itself.
		err = ctx.Err()
	}
	s.Seconds = time.Since(start).Seconds()
	if err != nil {
		s.Error = err.Error()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Info.Steps = append(r.Info.Steps, s)
	if err != nil {
		r.progress("✗ %-8s %6.1fs  %v", name, s.Seconds, err)
		r.Info.FailedStep = name
		r.Info.Error = err.Error()
		r.Info.Status = "failed"
		if ctx.Err() != nil {
			r.Info.Status = "interrupted"
		}
		_ = r.save()
		return &StepError{Step: name, Err: err}
	}
	r.progress("✓ %-8s %6.1fs", name, s.Seconds)
	return r.save()
}

// Finish marks the run complete: run.json gets its end time and file list,
// and the INCOMPLETE marker goes.
func (r *Run) Finish() error {
	t := r.now().UTC()
	r.Info.Finished = &t
	r.Info.Seconds = t.Sub(r.Info.Started).Seconds()
	r.Info.Status = "complete"
	if err := os.Remove(r.Path(runinfo.IncompleteFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	r.Info.Files = r.listFiles()
	return r.save()
}

// Abort records why the run stopped outside any step (e.g. interruption
// between steps). The INCOMPLETE marker stays.
func (r *Run) Abort(err error) {
	if r.Info.Status == "running" {
		r.Info.Status = "failed"
		r.Info.Error = err.Error()
	}
	t := r.now().UTC()
	r.Info.Finished = &t
	r.Info.Files = r.listFiles()
	_ = r.save()
}

// Discard removes the run folder of a run that made nothing: one that holds
// only run.json and the INCOMPLETE marker (the run stopped while looking for
// the GPU and tools). It reports whether the folder went.
func (r *Run) Discard() bool {
	entries, err := os.ReadDir(r.Dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if n := e.Name(); n != runinfo.InfoFile && n != runinfo.IncompleteFile {
			return false
		}
	}
	for _, n := range []string{runinfo.InfoFile, runinfo.IncompleteFile} {
		if err := os.Remove(r.Path(n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return false
		}
	}
	if err := os.Remove(r.Dir); err != nil {
		return false
	}
	if r.opts.Dir == "" {
		// The default parent folder, when this run was its only content.
		_ = os.Remove(filepath.Dir(r.Dir))
	}
	return true
}

func (r *Run) listFiles() []string {
	entries, _ := os.ReadDir(r.Dir)
	var names []string
	for _, e := range entries {
		if !e.IsDir() && e.Name() != runinfo.InfoFile {
			names = append(names, e.Name())
		}
	}
	return names
}

// save writes run.json through a temporary file so it is never half-written.
func (r *Run) save() error {
	data, err := json.MarshalIndent(r.Info, "", "  ")
	if err != nil {
		return err
	}
	tmp := r.Path(runinfo.InfoFile + ".tmp")
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", runinfo.InfoFile, err)
	}
	return os.Rename(tmp, r.Path(runinfo.InfoFile))
}

// Task is a named step of work that can run beside others.
type Task struct {
	Name string
	Fn   func(s *runinfo.Step) error
}

// Profile does the GPU steps: detect, build, profile, export, then stats and
// analyze side by side with the given tasks (e.g. loading the export to
// verify it), since all of them only read the export. The run folder then
// holds the .nsys-rep, the compacted .sqlite, the CSV reports, the
// transcript and the results JSON.
func (r *Run) Profile(ctx context.Context, also ...Task) error {
	var nvcc, nsys string
	var gpu runinfo.GPU
	if err := r.Step(ctx, "detect", func(s *runinfo.Step) error {
		var err error
		gpu, nvcc, nsys, err = r.detect(ctx)
		return err
	}); err != nil {
		return err
	}

	defer func() { r.held.release() }()
	if err := r.Step(ctx, "lock", func(s *runinfo.Step) error {
		return r.lockGPU(ctx, gpu)
	}); err != nil {
		return err
	}

	if err := r.Step(ctx, "build", func(s *runinfo.Step) error { return r.build(ctx, s, nvcc) }); err != nil {
		return err
	}

	err := r.Step(ctx, "profile", func(s *runinfo.Step) error {
		return r.profile(ctx, s, nsys)
	})
	r.afterProfile(ctx, gpu)
	if err != nil {
		return err
	}

	if err := r.Step(ctx, "export", func(s *runinfo.Step) error {
		return r.export(ctx, s, nsys)
	}); err != nil {
		return err
	}

	tasks := append([]Task{
		{Name: "stats", Fn: func(s *runinfo.Step) error { return r.stats(ctx, s, nsys) }},
		{Name: "analyze", Fn: func(s *runinfo.Step) error {
			a := r.analyze(ctx, s, nsys)
			r.mu.Lock()
			r.Info.Analyze = a
			r.mu.Unlock()
			return nil
		}},
	}, also...)
	return r.Concurrently(ctx, tasks...)
}

// Concurrently runs tasks as steps side by side and returns the first
// failure in task order, after all have ended.
func (r *Run) Concurrently(ctx context.Context, tasks ...Task) error {
	errs := make([]error, len(tasks))
	var wg sync.WaitGroup
	for i, t := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r.Step(ctx, t.Name, t.Fn)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *Run) profile(ctx context.Context, s *runinfo.Step, nsys string) error {
	env, iso := minimalEnv(os.Environ(), r.opts.KeepEnv)
	var prefix []string
	if r.opts.NoPIDNamespace {
		iso.Note = "turned off with --no-pid-namespace, so nsys sees every process on the machine"
	} else {
		prefix, iso.Note = pidNamespacePrefix(ctx)
		iso.PIDNamespace = prefix != nil
	}
	r.Info.Isolation = &iso
	if iso.Note != "" && r.opts.Warn != nil {
		fmt.Fprintf(r.opts.Warn, "nsyscheck: warning: %s; run.json records this (isolation)\n", iso.Note)
	}
	if g := r.Info.GPU; g != nil {
		// The program sees this GPU alone, named so that CUDA's own device
		// order cannot pick another.
		g.Visible = g.VisibleDevice()
		if prev := os.Getenv("CUDA_VISIBLE_DEVICES"); prev != "" && prev != g.VisibleDevice() {
			g.ReplacedVisible = prev
			if r.opts.Warn != nil {
				fmt.Fprintf(r.opts.Warn, "nsyscheck: note: the program sees GPU %d alone (CUDA_VISIBLE_DEVICES=%s replaces your %s); choose with --gpu\n",
					g.Index, g.VisibleDevice(), prev)
			}
		}
		env = setEnv(env, "CUDA_VISIBLE_DEVICES", g.VisibleDevice())
		env = setEnv(env, "CUDA_DEVICE_ORDER", "PCI_BUS_ID")
	}
	args := []string{"profile", "-t", runinfo.ProfileTrace, "-s", "none", "--cpuctxsw=none", "-o", runinfo.Base,
		"./" + runinfo.Base, "--json", runinfo.ResultsFile}
	argv := append(append(append(append([]string{}, r.bind...), prefix...), nsys), args...)
	s.Commands = append(s.Commands, commandLine(argv[0], argv[1:]...))
	cmd := command(ctx, r.Dir, env, argv[0], argv[1:]...)
	runErr := runLogged(cmd, r.Path(runinfo.TranscriptFile), nil)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if msg := programMessage(r.Path(runinfo.TranscriptFile)); msg != "" || exitCode(runErr) == 2 || exitCode(runErr) == 3 {
		code := exitCode(runErr)
		if code <= 0 {
			code = 1
		}
		return &ProgramError{ExitCode: code, Message: msg}
	}
	rep := r.Path(runinfo.Base + ".nsys-rep")
	st, err := os.Stat(rep)
	if err == nil && st.Size() == 0 && runErr == nil {
		// An interrupted import, or a full disk: no report is in it.
		return fmt.Errorf("nsys profile left %s.nsys-rep empty (0 bytes), so the run has no capture (a full disk, or nsys stopped while writing it):\n%s",
			runinfo.Base, tail(r.Path(runinfo.TranscriptFile), 15))
	}
	if err != nil {
		if q := findQdstrm(r.Dir, r.Path(runinfo.TranscriptFile)); q != "" {
			return fmt.Errorf("nsys left only %s and no %s.nsys-rep: its importer (QdstrmImporter) could not run, "+
				"most often because libdw.so.1 is missing; install libdw1 (and libelf1) or a complete Nsight Systems, "+
				"then run again", q, runinfo.Base)
		}
		if runErr != nil {
			return fmt.Errorf("nsys profile failed (%v):\n%s", runErr, tail(r.Path(runinfo.TranscriptFile), 15))
		}
		return fmt.Errorf("nsys profile exited 0 but wrote no %s.nsys-rep, so the run has no capture: check that the nsys found (%s) is Nsight Systems, or pass --nsys PATH; its output, in %s:\n%s",
			runinfo.Base, nsys, runinfo.TranscriptFile, tail(r.Path(runinfo.TranscriptFile), 15))
	}
	if runErr != nil {
		return fmt.Errorf("nsys profile failed (%v):\n%s", runErr, tail(r.Path(runinfo.TranscriptFile), 15))
	}
	if _, err := os.Stat(r.Path(runinfo.ResultsFile)); err != nil {
		return fmt.Errorf("the program wrote no %s:\n%s", runinfo.ResultsFile, tail(r.Path(runinfo.TranscriptFile), 15))
	}
	return nil
}

func (r *Run) export(ctx context.Context, s *runinfo.Step, nsys string) error {
	raw := r.Path(runinfo.Base + ".export.sqlite")
	args := []string{"export", "--type", "sqlite", "--output", raw, runinfo.Base + ".nsys-rep"}
	s.Commands = append(s.Commands, commandLine(nsys, args...))
	cmd := quickCommand(ctx, r.Dir, os.Environ(), nsys, args...)
	if err := runLogged(cmd, r.Path("export.log"), nil); err != nil {
		return fmt.Errorf("nsys export failed (%v):\n%s", err, tail(r.Path("export.log"), 15))
	}
	st, err := os.Stat(raw)
	if err != nil {
		return fmt.Errorf("nsys export wrote no %s:\n%s", raw, tail(r.Path("export.log"), 15))
	}
	if st.Size() == 0 {
		return fmt.Errorf("nsys export exited 0 but left %s empty (0 bytes), so the run has no export (a full disk, or an nsys that is no Nsight Systems: run %s by hand):\n%s",
			raw, commandLine(nsys, args...), tail(r.Path("export.log"), 15))
	}
	// Compact into the shipped export so no stale bytes survive in free pages.
	s.Commands = append(s.Commands, "VACUUM INTO "+runinfo.Base+".sqlite")
	if err := vacuumInto(raw, r.Path(runinfo.Base+".sqlite")); err != nil {
		return fmt.Errorf("nsys export wrote %s, which cannot be read as an SQLite database (%v), so it is no export: run %s by hand, or check that the nsys found is Nsight Systems (pass --nsys PATH):\n%s",
			raw, err, commandLine(nsys, args...), tail(r.Path("export.log"), 15))
	}
	return os.Remove(raw)
}

func vacuumInto(src, dst string) error {
	db, err := sql.Open("sqlite3", nsysdb.URI(src, "mode=ro"))
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.Exec("VACUUM INTO ?", dst)
	return err
}

func (r *Run) stats(ctx context.Context, s *runinfo.Step, nsys string) error {
	// nsys 2025.3 exits 1 after listing its reports, so the list decides.
	help, helpErr := askTool(ctx, nsys, "stats", "--help-reports")
	reports, err := StatsReports(string(help))
	if err != nil {
		if helpErr != nil {
			return fmt.Errorf("nsys stats --help-reports failed (%v): %s", helpErr, strings.TrimSpace(string(help)))
		}
		return err
	}
	r.mu.Lock()
	r.Info.Reports = reports
	r.mu.Unlock()
	args := []string{"stats", "--report", strings.Join(reports, ","), "--format", "csv",
		"--output", runinfo.Base, runinfo.Base + ".sqlite"}
	s.Commands = append(s.Commands, commandLine(nsys, args...))
	cmd := quickCommand(ctx, r.Dir, os.Environ(), nsys, args...)
	if err := runLogged(cmd, r.Path("stats.log"), nil); err != nil {
		return fmt.Errorf("nsys stats failed (%v):\n%s", err, tail(r.Path("stats.log"), 15))
	}
	// A report without records of its kind is skipped, so one may be
	// missing; none at all is a stats that did nothing.
	if len(reports) == 0 {
		return nil
	}
	for _, name := range reports {
		if _, err := os.Stat(r.Path(runinfo.Base + "_" + name + ".csv")); err == nil {
			return nil
		}
	}
	return fmt.Errorf("nsys stats exited 0 but wrote none of the %d CSV reports asked for (%s_%s.csv, ...): run %s by hand, or check that the nsys found is Nsight Systems (pass --nsys PATH):\n%s",
		len(reports), runinfo.Base, reports[0], commandLine(nsys, args...), tail(r.Path("stats.log"), 15))
}

// maxProgramLines bounds the program's error lines a message quotes.
const maxProgramLines = 20

// programMessage returns the program's own error lines ("pinned: ...") from
// the transcript, joined, or "".
func programMessage(transcript string) string {
	f, err := os.Open(transcript)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	more := 0
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, runinfo.Base+": ") {
			// A program that says the same without end is told by its
			// first lines.
			if len(lines) == maxProgramLines {
				more++
				continue
			}
			lines = append(lines, strings.TrimPrefix(line, runinfo.Base+": "))
		}
	}
	if more > 0 {
		lines = append(lines, fmt.Sprintf("and %d more such lines", more))
	}
	return strings.Join(lines, "; ")
}

// findQdstrm looks for a .qdstrm file nsys left in the run folder or names
// in its output.
func findQdstrm(dir, transcript string) string {
	if m, _ := filepath.Glob(filepath.Join(dir, "*.qdstrm")); len(m) > 0 {
		return m[0]
	}
	data, err := readEnd(transcript, maxLogTail)
	if err != nil {
		return ""
	}
	for _, f := range strings.FieldsFunc(string(data), func(r rune) bool {
		return r == ' ' || r == '\n' || r == '\r' || r == '\'' || r == '"' || r == '\t'
	}) {
		if strings.HasSuffix(f, ".qdstrm") {
			if _, err := os.Stat(f); err == nil {
				return f
			}
		}
	}
	return ""
}

// maxLogTail bounds what is read of a log's end for a message (a tool may
// write gigabytes to it before it fails).
const maxLogTail = 1 << 20

// readEnd reads the last limit bytes of the file at path, all of a shorter
// one.
func readEnd(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	from := max(st.Size()-limit, 0)
	return io.ReadAll(io.NewSectionReader(f, from, st.Size()-from))
}

// tail returns the last n lines of a file, for error messages.
func tail(path string, n int) string {
	data, err := readEnd(path, maxLogTail)
	if err != nil {
		return ""
	}
	text := strings.ReplaceAll(string(data), "\r", "\n")
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return "  (" + filepath.Base(path) + " is empty: it printed nothing)"
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  " + strings.Join(lines, "\n  ")
}

// setEnv sets name=value in env, replacing an earlier value.
func setEnv(env []string, name, value string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if n, _, _ := strings.Cut(kv, "="); n != name {
			out = append(out, kv)
		}
	}
	return append(out, name+"="+value)
}

// lockGPU queues for the GPU's lock, then looks at what else uses the GPU.
// Holding the lock, no other nsyscheck run profiles there, so whatever the
// look finds is foreign work.
func (r *Run) lockGPU(ctx context.Context, g runinfo.GPU) error {
	me := runinfo.LockInfo{PID: os.Getpid(), Host: r.Info.Host, Dir: r.Dir, Started: r.Info.Started}
	held, rec, err := acquireLock(ctx, LockPath(r.opts.LockDir, g), g, me, !r.opts.NoWait, r.opts.Warn)
	r.Info.Lock = &rec
	if err != nil {
		return err
	}
	r.held = held
	before := LookAtGPU(ctx, g, 3, r.opts.sampleApart())
	r.Info.Sharing = &runinfo.Sharing{Before: before}
	r.Info.Sharing.Summarize()
	if before.Busy() && r.opts.Warn != nil {
		fmt.Fprintf(r.opts.Warn, "nsyscheck: warning: GPU %d is not idle: %s; its bandwidth numbers may be disturbed (run.json records this: sharing)\n",
			g.Index, before.Describe("before profiling"))
	}
	return nil
}

// afterProfile looks at the GPU once more and releases its lock.
func (r *Run) afterProfile(ctx context.Context, g runinfo.GPU) {
	defer func() { r.held.release() }()
	if r.Info.Sharing == nil || ctx.Err() != nil {
		return
	}
	after := LookAtGPU(ctx, g, 2, r.opts.sampleApart())
	r.mu.Lock()
	defer r.mu.Unlock()
	wasBusy := r.Info.Sharing.Before.Busy()
	r.Info.Sharing.After = after
	r.Info.Sharing.Summarize()
	if after.Busy() && !wasBusy && r.opts.Warn != nil {
		fmt.Fprintf(r.opts.Warn, "nsyscheck: warning: GPU %d was not idle %s; its bandwidth numbers may be disturbed (run.json records this: sharing)\n",
			g.Index, after.Describe("right after profiling"))
	}
	_ = r.save()
}

// detect finds the GPU (the one of Options.GPU, else GPU 0) and its NUMA
// node, binds the program to that node unless told not to, finds nvcc and
// nsys, asks the tools their versions and picks the GPU architecture to
// build for.
func (r *Run) detect(ctx context.Context) (gpu runinfo.GPU, nvcc, nsys string, err error) {
	if r.opts.GPU != nil {
		gpu = *r.opts.GPU
	} else {
		gpus, err := ListGPUs(ctx)
		if err != nil {
			return gpu, "", "", err
		}
		gpu = gpus[0]
	}
	numa := LocateNUMA(ctx, gpu, r.opts.SysRoot)
	if r.opts.NoBind {
		numa.Binding, numa.Note = "none", "turned off with --no-bind"
	} else {
		r.bind = Bind(ctx, &numa)
	}
	gpu.NUMA = &numa
	info := gpu
	r.Info.GPU = &info
	if nvcc, err = FindNvcc(r.opts.Nvcc); err != nil {
		return gpu, "", "", err
	}
	if nsys, err = FindNsys(r.opts.Nsys); err != nil {
		return gpu, "", "", err
	}
	// Ask both tools their versions at once: each answer takes a while.
	var nvccVersion, nsysVersion string
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); nvccVersion = ToolVersion(ctx, nvcc) }()
	go func() { defer wg.Done(); nsysVersion = ToolVersion(ctx, nsys) }()
	wg.Wait()
	r.Info.Nvcc = &runinfo.Tool{Path: nvcc, Version: nvccVersion}
	r.Info.Nsys = &runinfo.Tool{Path: nsys, Version: nsysVersion}
	arch := r.opts.Arch
	if arch == "" {
		if arch, err = Arch(gpu.ComputeCap); err != nil {
			return gpu, "", "", err
		}
	}
	r.Info.Arch = arch
	return gpu, nvcc, nsys, nil
}

// build writes the bundled CUDA source and compiles it, or reuses the
// build cache's binary for the same arguments.
func (r *Run) build(ctx context.Context, s *runinfo.Step, nvcc string) error {
	src := r.Path(kernels.PinnedFile)
	if err := os.WriteFile(src, kernels.PinnedSource, 0o644); err != nil {
		return fmt.Errorf("write the CUDA source: %w", err)
	}
	args := []string{"-std=c++17", "-O3", "-lineinfo", "-arch=" + r.Info.Arch, "-o", runinfo.Base, kernels.PinnedFile}
	s.Commands = append(s.Commands, commandLine(nvcc, args...))
	cached := r.buildCachePath(args)
	if cached != "" && copyExecutable(cached, r.Path(runinfo.Base)) == nil {
		s.Commands = append(s.Commands, "reused "+cached)
		r.Info.BuildCache = cached
		return nil
	}
	cmd := quickCommand(ctx, r.Dir, os.Environ(), nvcc, args...)
	if err := runLogged(cmd, r.Path("build.log"), nil); err != nil {
		return fmt.Errorf("nvcc failed (%v); its output is in %s:\n%s", err, r.Path("build.log"), tail(r.Path("build.log"), 15))
	}
	if st, err := os.Stat(r.Path(runinfo.Base)); err != nil || st.IsDir() || st.Size() == 0 || st.Mode()&0o111 == 0 {
		return fmt.Errorf("nvcc exited 0 but wrote no program %s to profile (check that %s is the CUDA compiler, or pass --nvcc PATH); its output is in %s:\n%s",
			r.Path(runinfo.Base), nvcc, r.Path("build.log"), tail(r.Path("build.log"), 15))
	}
	if cached != "" {
		r.storeBuild(cached)
	}
	return nil
}
