package main

import (
	"context"
	"fmt"
	"github.com/nsyscheck/nsyscheck/internal/ctlchar"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/nsyscheck/nsyscheck/internal/sqlitefile"
	"github.com/nsyscheck/nsyscheck/privacy"
	"github.com/nsyscheck/nsyscheck/report"
)

// scrubOptions are scrub's flags.
type scrubOptions struct {
	Out       string
	Force     bool
	Keep      []string
	DropNames bool
}

func newScrubCmd(s Streams) *cobra.Command {
	opts := &scrubOptions{}
	cmd := &cobra.Command{
		Use:   "scrub CAPTURE.sqlite -o OUT.sqlite",
		Short: "Write a shareable copy of a SQLite export, without what it reveals of the machine",
		Long: `scrub writes a copy of an Nsight Systems SQLite export that can be shared:
environment variable values outside the allowlist (PATH, LD_LIBRARY_PATH,
HOME, CUDA_*, NSYS_*; add names with --keep) are replaced by "[redacted]",
processes other than the profiled program and nsys are removed with every
row that names them, credentials in URLs are cut out, and the copy is
compacted (VACUUM INTO) so no stale bytes survive in its free pages. The copy
is scanned before it is put in place; the input is never modified, and OUT
is never overwritten unless --force is given. Ctrl-C or SIGTERM stops it with
exit status 130, removing its temporary copies and leaving OUT as it was;
what a killed scrub left behind is removed by the next one.

A .nsys-rep report cannot be rewritten: scrub its SQLite export instead
(nsys export --type sqlite -o CAPTURE.sqlite CAPTURE.nsys-rep) and share
that. nsyscheck verify reads a scrubbed copy like any other export.`,
		Example: `  nsyscheck scrub run/pinned.sqlite -o shared/pinned.sqlite
  nsyscheck scrub a.sqlite -o b.sqlite --keep OMP_NUM_THREADS --drop-names`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if opts.Out == "" {
				return &statusError{code: exitError, err: fmt.Errorf("scrub needs -o OUT.sqlite: where to write the shareable copy")}
			}
			if err := sqlitefile.Available(args[0]); err != nil {
				return &statusError{code: exitError, err: err}
			}
			// SIGINT and SIGTERM stop the scrub: its temporary copies are
			// removed, OUT is left as it was, and the exit status is 130.
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			rep, err := privacy.Scrub(args[0], opts.Out, privacy.ScrubOptions{Force: opts.Force, Keep: opts.Keep,
				DropNames: opts.DropNames, Context: ctx})
			if ctx.Err() != nil {
				if err == nil {
					// Done before the signal was seen: OUT is whole.
					err = fmt.Errorf("interrupted after %s was written whole", opts.Out)
				}
				return &statusError{code: exitSignal, err: err}
			}
			if err != nil {
				return &statusError{code: exitError, err: err}
			}
			s, flush := messages(s)
			defer flush()
			noun := "findings"
			if len(rep.Findings) == 1 {
				noun = "finding"
			}
			fmt.Fprintf(s.Out, "wrote %s: removed or redacted %d %s of %s\n", ctlchar.Line(opts.Out), len(rep.Findings), noun, ctlchar.Line(args[0]))
			for _, d := range rep.Diagnostics() {
				fmt.Fprintf(s.Out, "  was: %s\n", report.DiagnosticText(d))
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&opts.Out, "out", "o", "", "write the shareable copy to `FILE` (must not exist)")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "overwrite OUT if it exists")
	cmd.Flags().StringSliceVar(&opts.Keep, "keep", nil, "keep this environment variable's value too (repeatable)")
	cmd.Flags().BoolVar(&opts.DropNames, "drop-names", false, "remove the names of redacted variables as well as their values")
	return cmd
}
