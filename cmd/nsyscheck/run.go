package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/nsyscheck/nsyscheck/check"
	"github.com/nsyscheck/nsyscheck/predictions"
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

nvcc is looked for in PATH, $CUDA_HOME/bin and /usr/local/cuda/bin; nsys in
$NSYS, PATH, /opt/nvidia/nsight-systems/*/bin and the CLI that Nsight Compute
bundles (/opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys).

The profiled program sees only PATH, LD_LIBRARY_PATH, HOME, CUDA_* and NSYS_*
of your environment (add names with --keep-env), because a capture records
the environment and every process it can see.`,
		Example: `  nsyscheck run
  nsyscheck run --out runs/h200-first --timeout 10m
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
	if errors.As(err, &se) && se.Step == "detect" && run.Discard() {
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
	ropts := runner.Options{
		Dir: opts.Out, Nsys: opts.Nsys, Nvcc: opts.Nvcc, Arch: opts.Arch,
		KeepEnv: opts.KeepEnv, NoPIDNamespace: opts.NoPIDNamespace,
	}
	if !opts.Quiet && isTerminal(s.Err) {
		ropts.Progress = s.Err
	}
	if !opts.Quiet {
		ropts.Warn = s.Err
	}
	run, err := runner.New(ropts, buildVersion())
	if err != nil {
		return &statusError{code: exitError, err: err}
	}
	fail := func(err error) error { return runFailed(ctx, run, err) }
	// Verifying needs only the export, so it runs beside stats and analyze.
	var checked *check.Checked
	verify := runner.Task{Name: "verify", Fn: func(st *runner.Step) error {
		var err error
		checked, err = check.Load(run.Path(runner.Base+".sqlite"), check.Options{})
		return err
	}}
	if err := run.Profile(ctx, verify); err != nil {
		return fail(err)
	}
	if err := run.Step(ctx, "report", func(st *runner.Step) error {
		// The rule's output and the run's facts are complete now.
		info := run.Facts()
		checked.Enrich(&info)
		return writeRunReports(run, checked)
	}); err != nil {
		return fail(err)
	}
	if err := run.Finish(); err != nil {
		return fail(err)
	}
	result := checked.Result
	if err := writeResults(s.Out, opts.Format, []*predictions.Result{result}); err != nil {
		return &statusError{code: exitError, err: err}
	}
	abs, _ := filepath.Abs(run.Dir)
	fmt.Fprintf(s.Err, "\nrun folder: %s (%.1f s)\n", abs, run.Info.Seconds)
	if !result.AllHeld() {
		return &statusError{code: exitDied}
	}
	return nil
}
