package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/nsyscheck/nsyscheck/check"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/fleet"
	"github.com/nsyscheck/nsyscheck/internal/environ"
	"github.com/nsyscheck/nsyscheck/predictions"
	"github.com/nsyscheck/nsyscheck/report"
	"github.com/nsyscheck/nsyscheck/runinfo"
	"github.com/nsyscheck/nsyscheck/runner"
)

// runOptions are run's flags.
type runOptions struct {
	Out            string
	Nsys, Nvcc     string
	Arch           string
	KeepEnv        []string
	NoPIDNamespace bool
	Timeout        time.Duration
	Quiet          bool
	Format         string
	Verbose        bool
	GPU            string
	NoWait         bool
	NoBind         bool
}

func newRunCmd(s Streams) *cobra.Command {
	opts := &runOptions{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Build, profile and verify the bundled CUDA program on this GPU machine",
		Long: `run does the whole job on a machine with an NVIDIA GPU:

  detect   find the GPU (nvidia-smi), nvcc and nsys
  build    write the bundled pinned.cu and build it for this GPU
  profile  nsys profile -t cuda,nvtx -s none --cpuctxsw=none, in a minimal
           environment and (where the machine allows) a private PID namespace
  export   nsys export --type sqlite, compacted so no stale bytes remain
  stats    the nsys stats CSV reports (names chosen from --help-reports)
  analyze  NVIDIA's cuda_memcpy_async rule, where nsys has it
  verify   the lesson's predictions, with the numbers behind each verdict
  report   report.txt, verdicts.json, report.md and report.html with plots

Everything goes into one new run folder (default ./nsyscheck-runs/<time>),
with run.json recording tools, GPU, PCIe link, isolation, command lines and
timings. An existing folder is never overwritten; a run that stops early
(an error, Ctrl-C or --timeout) leaves its folder with an INCOMPLETE marker
and run.json naming the step it reached.

--gpu N runs on GPU N alone (CUDA_VISIBLE_DEVICES names it by UUID), with
the program's threads and pinned buffers on the GPU's NUMA node (sysfs or
nvidia-smi topo -m; numactl --cpunodebind --membind where allowed, else
taskset with the node's CPUs); run.json records the node and the binding.
--gpu all checks every GPU one after another: --out then holds one run
folder per GPU (gpu0, gpu1, ...) and summary.txt / summary.json, the fleet
table of pinned bandwidth against each GPU's rated link and its peers.

Runs queue per GPU: a run waits while another nsyscheck run profiles on its
GPU (a lock file per GPU in $NSYSCHECK_LOCK_DIR, default
/tmp/nsyscheck-locks, released however a run ends); --no-wait fails instead.
Holding the lock, run looks at the GPU's compute processes and utilisation
before and after profiling; other work there is recorded in run.json and
shown as a shared-gpu warning beside the verdicts.

nvcc is looked for in PATH, $CUDA_HOME/bin and /usr/local/cuda/bin; nsys in
$NSYS, PATH, /opt/nvidia/nsight-systems/*/bin and the CLI that Nsight Compute
bundles (/opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys).

The profiled program sees only PATH, LD_LIBRARY_PATH, HOME, CUDA_* and NSYS_*
of your environment (add names with --keep-env), because a capture records
the environment and every process it can see.`,
		Example: `  nsyscheck run
  nsyscheck run --out runs/h200-first --timeout 10m
  nsyscheck run --gpu all --out /shared/fleet/$(hostname)
  nsyscheck run --nsys /opt/nvidia/nsight-systems/2025.3.1/bin/nsys --quiet`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return runRun(opts, s)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Out, "out", "o", "", "run folder to create (default ./nsyscheck-runs/<UTC time>)")
	f.StringVar(&opts.Nsys, "nsys", "", "nsys executable to use")
	f.StringVar(&opts.Nvcc, "nvcc", "", "nvcc executable to use")
	f.StringVar(&opts.Arch, "arch", "", "GPU architecture to build for, e.g. sm_90 (default: the GPU present)")
	f.StringSliceVar(&opts.KeepEnv, "keep-env", nil, "also pass the environment variable `NAME` to the profiled program (repeatable)")
	f.BoolVar(&opts.NoPIDNamespace, "no-pid-namespace", false, "do not profile in a private PID namespace")
	f.DurationVar(&opts.Timeout, "timeout", 0, "stop the run after this long (e.g. 10m); 0 means no limit")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress lines")
	addFormatFlag(cmd, &opts.Format, "verdict output: text, json or markdown")
	f.BoolVarP(&opts.Verbose, "verbose", "v", false, "text output: show every evidence line (report.txt in the run folder always has them all)")
	f.StringVar(&opts.GPU, "gpu", "", "GPU to run on, by nvidia-smi's index, or all (one after another, one run folder each); default 0")
	f.BoolVar(&opts.NoWait, "no-wait", false, "fail at once when another nsyscheck run is profiling on the GPU, instead of waiting for it")
	f.BoolVar(&opts.NoBind, "no-bind", false, "do not bind the program to the GPU's NUMA node")
	return cmd
}

// runFailed ends a run that err stopped: it records why in run.json and
// says what is left in the run folder, with exit status 130 for Ctrl-C.
func runFailed(ctx context.Context, run *runner.Run, err error) error {
	if cause := context.Cause(ctx); cause != nil {
		var se *runner.StepError
		if errors.As(err, &se) && errors.Is(se.Err, ctx.Err()) {
			err = fmt.Errorf("step %q stopped: %v; what was captured so far is in %s", se.Step, cause, run.Dir)
		} else {
			err = fmt.Errorf("%w (%v); what was captured so far is in %s", err, cause, run.Dir)
		}
		run.Abort(cause)
		if errors.Is(ctx.Err(), context.Canceled) {
			return &statusError{code: exitSignal, err: err}
		}
		return &statusError{code: exitError, err: err}
	}
	run.Abort(err)
	var se *runner.StepError
	if errors.As(err, &se) && (se.Step == "detect" || se.Step == "lock") && run.Discard() {
		// Nothing was made: leave no empty run folder behind.
		return &statusError{code: exitError, err: err}
	}
	return &statusError{code: exitError, err: fmt.Errorf("%w\nthe run folder %s keeps what was made so far (run.json, logs)", err, run.Dir)}
}

func runRun(opts *runOptions, s Streams) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, opts.Timeout, fmt.Errorf("--timeout %s reached", opts.Timeout))
		defer cancel()
	}
	apart, err := sampleApart(s.Env)
	if err != nil {
		return err
	}
	ropts := runner.Options{
		Dir: opts.Out, Nsys: opts.Nsys, Nvcc: opts.Nvcc, Arch: opts.Arch,
		KeepEnv: opts.KeepEnv, NoPIDNamespace: opts.NoPIDNamespace,
		NoWait: opts.NoWait, NoBind: opts.NoBind, SysRoot: s.Env.Get(sysRootEnv),
		SampleApart: apart,
	}
	if !opts.Quiet && isTerminal(s.Err) {
		ropts.Progress = s.Err
	}
	if !opts.Quiet {
		ropts.Warn = s.Err
	}
	if opts.GPU != "" {
		// Without --gpu, the detect step finds GPU 0 itself.
		gpus, err := runner.ListGPUs(ctx)
		if err != nil {
			return &statusError{code: exitError, err: fmt.Errorf("step \"detect\" failed: %w", err)}
		}
		chosen, err := runner.SelectGPUs(gpus, opts.GPU)
		if err != nil {
			return &statusError{code: exitError, err: err}
		}
		if opts.GPU == "all" {
			return runAll(ctx, opts, ropts, chosen, s)
		}
		ropts.GPU = &chosen[0]
	}
	checked, err := runOne(ctx, ropts, s)
	if err != nil {
		return err
	}
	result := checked.Result
	if err := writeResults(s.Out, opts.Format, []*predictions.Result{result}, nil, report.TextOptions{Width: textWidth(s.Out, s.Env), Verbose: opts.Verbose}); err != nil {
		return &statusError{code: exitError, err: err}
	}
	if !result.AllHeld() {
		return &statusError{code: exitDied}
	}
	return nil
}

// sysRootEnv names the variable that moves where sysfs is read (default
// /sys), for machines that mount it elsewhere and for tests.
const sysRootEnv = "NSYSCHECK_SYSFS"

// sampleApartEnv names the variable that sets how far apart the GPU's
// utilisation is sampled (a duration such as 500ms; default 200ms): longer
// to catch bursty work beside the run, shorter where nothing else runs.
const sampleApartEnv = "NSYSCHECK_SAMPLE_APART"

// sampleApart reads sampleApartEnv from env; 0 when it is not set (the
// default).
func sampleApart(env environ.Env) (time.Duration, error) {
	v := strings.TrimSpace(env.Get(sampleApartEnv))
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 || d > time.Minute {
		return 0, &statusError{code: exitError, err: fmt.Errorf("%s=%q: give a duration between 1ms and 1m, such as 200ms", sampleApartEnv, v)}
	}
	return d, nil
}

// runOne does one run into ropts.Dir and returns its checked result. The
// run folder holds everything, with the verdicts in report.txt and
// verdicts.json.
func runOne(ctx context.Context, ropts runner.Options, s Streams) (*check.Checked, error) {
	run, err := runner.New(ropts, buildVersion())
	if err != nil {
		return nil, &statusError{code: exitError, err: err}
	}
	fail := func(err error) error { return runFailed(ctx, run, err) }
	// Verifying needs only the export, so it runs beside stats and analyze.
	// The profile step is recorded by then: its facts tell a trace another
	// profiler took from a wrong flag.
	var checked *check.Checked
	verify := runner.Task{Name: "verify", Fn: func(st *runinfo.Step) error {
		var err error
		info := run.Facts()
		checked, err = check.Load(run.Path(runinfo.Base+".sqlite"), check.Options{Run: &info})
		return err
	}}
	if err := run.Profile(ctx, verify); err != nil {
		return nil, fail(err)
	}
	if err := run.Step(ctx, "report", func(st *runinfo.Step) error {
		// The rule's output and the run's facts are complete now.
		info := run.Facts()
		checked.Enrich(&info)
		if checked.TraceLost != nil && ropts.Warn != nil {
			fmt.Fprintf(ropts.Warn, "nsyscheck: warning: %s; see %s below the verdicts\n", report.TraceLossText(*checked.TraceLost), diag.CodeTraceLost)
		}
		checked.Result.MapPaths(shareInput(run.Path(runinfo.Base+".sqlite"), false, s.Env).apply)
		return writeRunReports(run, checked)
	}); err != nil {
		return nil, fail(err)
	}
	if err := run.Finish(); err != nil {
		return nil, fail(err)
	}
	abs, _ := filepath.Abs(run.Dir)
	fmt.Fprintf(s.Err, "\nrun folder: %s (%.1f s)\n", abs, run.Info.Seconds)
	return checked, nil
}

// Files --gpu all writes beside the per-GPU run folders.
const (
	summaryText = "summary.txt"
	summaryJSON = "summary.json"
)

// runAll checks the GPUs one after another, each into its own run folder
// gpuN of the --out folder, then writes and prints the fleet summary. A GPU
// whose run fails does not stop the others; the exit status is the worst.
func runAll(ctx context.Context, opts *runOptions, ropts runner.Options, gpus []runinfo.GPU, s Streams) error {
	parent := opts.Out
	if parent == "" {
		parent = filepath.Join("nsyscheck-runs", time.Now().UTC().Format("20060102-150405"))
	}
	if _, err := os.Stat(parent); err == nil {
		return &statusError{code: exitError, err: fmt.Errorf("run folder %s already exists; nsyscheck never overwrites a run: pass another --out", parent)}
	} else if err := runner.LinkToNothing(parent); err != nil {
		return &statusError{code: exitError, err: err}
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return &statusError{code: exitError, err: fmt.Errorf("create the run folder %s: %w", parent, err)}
	}
	var checked []*check.Checked
	var failed []string
	worst := exitHeld
	for _, g := range gpus {
		if ctx.Err() != nil {
			failed = append(failed, fmt.Sprintf("GPU %d: not run (%v)", g.Index, context.Cause(ctx)))
			continue
		}
		g := g
		o := ropts
		o.GPU = &g
		o.Dir = filepath.Join(parent, fmt.Sprintf("gpu%d", g.Index))
		fmt.Fprintf(s.Err, "GPU %d (%s, bus %s):\n", g.Index, g.Name, dashIfEmpty(g.BusID))
		k, err := runOne(ctx, o, s)
		if err != nil {
			fmt.Fprintf(s.Err, "nsyscheck: GPU %d: %v\n", g.Index, err)
			failed = append(failed, fmt.Sprintf("GPU %d: %v", g.Index, err))
			worst = max(worst, exitError)
			var se *statusError
			if errors.As(err, &se) && se.code == exitSignal {
				worst = exitSignal
			}
			continue
		}
		if !k.Result.AllHeld() {
			worst = max(worst, exitDied)
		}
		checked = append(checked, k)
	}
	if err := writeSummary(parent, checked, failed, opts, s); err != nil {
		return &statusError{code: exitError, err: err}
	}
	if worst != exitHeld {
		return &statusError{code: worst}
	}
	return nil
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writeSummary writes summary.txt and summary.json into the --gpu all
// folder: the fleet table over the GPUs that ran (with one GPU, its row
// alone) and the GPUs that failed. The verdicts are printed with the fleet
// table after them (in JSON, the envelope's fleet), then the failed GPUs.
func writeSummary(parent string, checked []*check.Checked, failed []string, opts *runOptions, s Streams) error {
	// Each run's verdicts.json was written already; the summary carries
	// the findings, and the verdicts printed below show them.
	sum := check.Fleet(checked, 1)
	if sum == nil {
		empty := fleet.Summarize(nil, fleet.DefaultThresholds)
		sum = &empty
	}
	textOpts := report.TextOptions{Width: textWidth(s.Out, s.Env), Verbose: opts.Verbose}
	if len(checked) > 0 {
		if err := writeResults(s.Out, opts.Format, check.Results(checked), sum, textOpts); err != nil {
			return err
		}
	}
	var failedText bytes.Buffer
	for _, f := range failed {
		fmt.Fprintf(&failedText, "failed %s\n", f)
	}
	// The file is read in an editor or a pager: the default width.
	var text bytes.Buffer
	if err := report.FleetText(&text, *sum, report.TextOptions{}); err != nil {
		return err
	}
	text.Write(failedText.Bytes())
	if err := writeNew(filepath.Join(parent, summaryText), text.Bytes()); err != nil {
		return err
	}
	data, err := json.MarshalIndent(struct {
		report.JSONFleet
		Failed []string `json:"failed"`
	}{report.FleetJSON(*sum), append([]string{}, failed...)}, "", "  ")
	if err != nil {
		return err
	}
	if err := writeNew(filepath.Join(parent, summaryJSON), append(data, '\n')); err != nil {
		return err
	}
	if opts.Format != report.FormatJSON {
		if len(checked) == 0 {
			// No verdicts to print the table after: the table alone.
			fmt.Fprintln(s.Out)
			if err := report.FleetText(s.Out, *sum, textOpts); err != nil {
				return err
			}
		}
		if _, err := s.Out.Write(failedText.Bytes()); err != nil {
			return err
		}
	}
	abs, _ := filepath.Abs(parent)
	fmt.Fprintf(s.Err, "\nsummary: %s\n", filepath.Join(abs, summaryText))
	return nil
}
