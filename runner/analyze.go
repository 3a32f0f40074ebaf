package runner

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/nsyscheck/nsyscheck/nsysrule"
	"github.com/nsyscheck/nsyscheck/runinfo"
)

// analyze runs the rule where this nsys has it. Its absence or failure is
// recorded, not fatal: the rule is a second opinion beside nsyscheck's own.
func (r *Run) analyze(ctx context.Context, s *runinfo.Step, nsys string) *runinfo.Analyze {
	a := &runinfo.Analyze{Rule: nsysrule.Name, Flagged: []nsysrule.FlaggedCopy{}}
	// The rule list decides, not the exit status: nsys 2025.3 exits non-zero
	// after printing help.
	help, _ := askTool(ctx, nsys, "analyze", "--help-rules")
	if !strings.Contains(string(help), nsysrule.Name) {
		a.Note = "this nsys has no " + nsysrule.Name + " rule (nsys analyze --help-rules does not list it)"
		return a
	}
	args := []string{"analyze", "-r", nsysrule.Name, "--format", "csv", "-o", runinfo.Base, runinfo.Base + ".sqlite"}
	s.Commands = append(s.Commands, commandLine(nsys, args...))
	cmd := quickCommand(ctx, r.Dir, os.Environ(), nsys, args...)
	if err := runLogged(cmd, r.Path("analyze.log"), nil); err != nil {
		a.Note = fmt.Sprintf("nsys analyze failed (%v): %s", err, strings.TrimSpace(tail(r.Path("analyze.log"), 3)))
		return a
	}
	a.File = runinfo.Base + "_" + nsysrule.Name + ".csv"
	flagged, err := nsysrule.ReadCSV(r.Path(a.File))
	if err != nil {
		a.Note = err.Error()
		return a
	}
	a.Available = true
	a.Flagged = flagged
	return a
}
