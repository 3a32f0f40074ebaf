package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nsyscheck/nsyscheck/internal/ctlchar"
	"github.com/nsyscheck/nsyscheck/internal/environ"
	"github.com/nsyscheck/nsyscheck/internal/textwrap"
	"github.com/nsyscheck/nsyscheck/privacy"
	"github.com/nsyscheck/nsyscheck/report"
)

// Exit statuses: the contract scripts and CI rely on.
const (
	exitHeld  = 0 // every prediction held
	exitDied  = 1 // some claim died or could not be decided
	exitError = 2 // the input could not be read, or the command failed
	// exitExposed: --fail-on-exposure and a capture exposes its machine.
	exitExposed = 3
	exitSignal  = 130 // interrupted by SIGINT or SIGTERM
)

// version is set at link time (-ldflags "-X main.version=v1.2.3"); otherwise
// the module's build information supplies it.
var version = ""

func buildVersion() string {
	if version != "" {
		return version
	}
	bi, _ := debug.ReadBuildInfo()
	return versionOf(bi)
}

// versionOf names the build from its build information: the module version
// `go install MODULE@VERSION` records, else the git revision the go command
// stamped (with "+dirty" when the tree had changes), else a plain "devel"
// with how to get a version.
func versionOf(bi *debug.BuildInfo) string {
	if bi == nil {
		return "devel (no build information)"
	}
	v := bi.Main.Version
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" && modified == "true" {
		rev += "+dirty"
	}
	switch {
	case v != "" && v != "(devel)" && rev != "":
		return v + " (" + rev + ")"
	case v != "" && v != "(devel)":
		return v
	case rev != "":
		return "devel " + rev
	}
	return "devel (built without version information: install a release with go install github.com/nsyscheck/nsyscheck/cmd/nsyscheck@latest, or build with make build)"
}

// Streams are a command's standard streams and environment; tests pass
// buffers, and an environment of their own so that commands run side by
// side in one process.
type Streams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	// Env is the environment the command reads (COLUMNS, NSYS, PATH, the
	// user's cache folder); nil is the process's.
	Env environ.Env
}

// isTerminal reports whether w is a terminal, for progress output.
func isTerminal(w io.Writer) bool {
	f, ok := underlying(w).(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// underlying returns the writer below the ones Main wraps the streams in
// (privacy.MaskWriter, ctlchar.Writer): the terminal or file itself.
func underlying(w io.Writer) io.Writer {
	for {
		u, ok := w.(interface{ Unwrap() io.Writer })
		if !ok {
			return w
		}
		w = u.Unwrap()
	}
}

// statusError carries an exit status through cobra. A nil err means the
// command already said everything it had to.
type statusError struct {
	code int
	err  error
}

func (e *statusError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *statusError) Unwrap() error { return e.err }

func newRootCmd(s Streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "nsyscheck",
		Short: "Check a CUDA pinned-memory lesson's predictions against an Nsight Systems capture",
		Long: `nsyscheck proves or refutes, from a profiler capture, four predictions about
pinned host memory: pageable vs pinned copy speed, whether cudaMemcpyAsync
blocks the host, what zero-copy kernels cost, and what the capture's API
trace shows. Every verdict comes with the numbers that decided it.

  nsyscheck run                        build, profile and verify on a GPU
  nsyscheck verify CAPTURE...          verify captures, on any machine
  nsyscheck report CAPTURE... -o DIR   Markdown and HTML reports with plots
  nsyscheck scrub CAPTURE -o OUT       a shareable copy of a SQLite export
  nsyscheck audit CAPTURE [AFTER]      the lesson's rule on any program's
                                       capture, and given AFTER its check

Exit status: 0 every prediction held, 1 some prediction died or was
unavailable, 2 the input could not be read or the command failed, 3 verify
--fail-on-exposure found a capture exposing its machine, 130 interrupted
(Ctrl-C or SIGTERM). audit exits 0 when no copy breaks the rule (one
capture) or the check held (two), 1 otherwise, 2 on an input it cannot read.`,
		Version:       buildVersion(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	// --version has no -v: that is verify's, run's and audit's --verbose,
	// and "nsyscheck -v verify" must not print the version instead.
	root.Flags().Bool("version", false, "print nsyscheck's version")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if c == c.Root() && strings.Contains(err.Error(), "'v' in -v") {
			err = fmt.Errorf("-v is no flag of nsyscheck itself: --version prints the version, and -v (--verbose) is a flag of verify, run and audit, as in 'nsyscheck verify -v CAPTURE'")
		}
		return &statusError{code: exitError, err: fmt.Errorf("%w\nrun '%s --help' for usage", err, c.CommandPath())}
	})
	wrapHelp(root, s.Env)
	root.AddCommand(newVerifyCmd(s), newRunCmd(s), newReportCmd(s), newScrubCmd(s), newAuditCmd(s))
	return root
}

// wrapHelp lays out every command's help at the width of the stream it is
// printed on: each paragraph filled anew, a list of flags or commands
// wrapped beneath its own column; env gives COLUMNS.
func wrapHelp(root *cobra.Command, env environ.Env) {
	help := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		out := c.OutOrStdout()
		var b bytes.Buffer
		c.SetOut(&b)
		help(c, args)
		c.SetOut(out)
		_, _ = io.WriteString(out, textwrap.Reflow(b.String(), textWidth(out, env)))
	})
}

// addFormatFlag adds --format (text, json or markdown) with completion of
// its values.
func addFormatFlag(cmd *cobra.Command, p *string, usage string) {
	cmd.Flags().StringVar(p, "format", report.FormatText, usage)
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(report.Formats, cobra.ShellCompDirectiveNoFileComp))
}

// checkFormat refuses a --format that report.Write does not render.
func checkFormat(format string) error {
	for _, f := range report.Formats {
		if f == format {
			return nil
		}
	}
	return &statusError{code: exitError, err: fmt.Errorf("unknown --format %q: use text, json or markdown", format)}
}

// Main runs nsyscheck with args and returns the exit status. Everything it
// prints goes through privacy.MaskWriter and then ctlchar.Writer: no
// credential a capture or a user's file carries is printed unmasked, and no
// control character in a name (a terminal escape in a GPU or NVTX name) is
// printed raw, whichever message holds it.
func Main(args []string, s Streams) int {
	// stderr is wrapped line by line at its own width (messages, errors,
	// the notes of other packages); stdout's text is laid out at its width
	// by whatever writes it, and its JSON and Markdown are never wrapped.
	wrapped := &textwrap.Writer{W: s.Err, Width: textWidth(s.Err, s.Env), Hang: 4}
	out, errw := &ctlchar.Writer{W: s.Out}, &ctlchar.Writer{W: wrapped}
	defer func() {
		_ = out.Flush()
		_ = errw.Flush()
		_ = wrapped.Flush()
	}()
	s.Out, s.Err = privacy.MaskWriter{W: out}, privacy.MaskWriter{W: errw}
	root := newRootCmd(s)
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	if err == nil {
		return exitHeld
	}
	var ee *statusError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(s.Err, "nsyscheck: %v\n", ee.err)
		}
		return ee.code
	}
	fmt.Fprintf(s.Err, "nsyscheck: %v\n", err)
	if strings.HasPrefix(err.Error(), "required flag") {
		// cobra's check of a flag marked required (report -o): the same
		// pointer to the usage as a flag it cannot parse.
		fmt.Fprintf(s.Err, "run '%s --help' for usage\n", cmd.CommandPath())
	}
	return exitError
}
