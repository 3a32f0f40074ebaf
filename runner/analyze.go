package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gocarina/gocsv"
	"github.com/nsyscheck/nsyscheck/internal/nsys"
	"github.com/nsyscheck/nsyscheck/internal/regular"
)

// AnalyzeRule is the Nsight Systems expert rule that lists asynchronous
// copies whose host side is pageable memory.
const AnalyzeRule = "cuda_memcpy_async"

// Analyze is what NVIDIA's cuda_memcpy_async rule said about the capture.
type Analyze struct {
	Rule      string `json:"rule"`
	Available bool   `json:"available"`
	// Note says why the rule could not run, when it could not.
	Note string `json:"note,omitempty"`
	File string `json:"file,omitempty"`
	// Flagged lists the copies the rule reports, in start order.
	Flagged []FlaggedCopy `json:"flagged"`
}

// FlaggedCopy is one row of the rule's output.
type FlaggedCopy struct {
	Start    int64   `csv:"Start (ns)" json:"start"`
	Duration int64   `csv:"Duration (ns)" json:"duration"`
	SrcKind  string  `csv:"Src Kind" json:"srcKind"`
	DstKind  string  `csv:"Dst Kind" json:"dstKind"`
	MB       float64 `csv:"Bytes (MB)" json:"mb"`
	PID      int64   `csv:"PID" json:"pid"`
	API      string  `csv:"API Name" json:"api"`
}

// analyze runs the rule where this nsys has it. Its absence or failure is
// recorded, not fatal: the rule is a second opinion beside nsyscheck's own.
func (r *Run) analyze(ctx context.Context, s *Step, nsys string) *Analyze {
	a := &Analyze{Rule: AnalyzeRule, Flagged: []FlaggedCopy{}}
	// The rule list decides, not the exit status: nsys 2025.3 exits non-zero
	// after printing help.
	help, _ := command(ctx, r.Dir, os.Environ(), nsys, "analyze", "--help-rules").CombinedOutput()
	if !strings.Contains(string(help), AnalyzeRule) {
		a.Note = "this nsys has no " + AnalyzeRule + " rule (nsys analyze --help-rules does not list it)"
		return a
	}
	args := []string{"analyze", "-r", AnalyzeRule, "--format", "csv", "-o", Base, Base + ".sqlite"}
	s.Commands = append(s.Commands, commandLine(nsys, args...))
	cmd := command(ctx, r.Dir, os.Environ(), nsys, args...)
	if err := runLogged(cmd, r.Path("analyze.log"), nil); err != nil {
		a.Note = fmt.Sprintf("nsys analyze failed (%v): %s", err, strings.TrimSpace(tail(r.Path("analyze.log"), 3)))
		return a
	}
	a.File = Base + "_" + AnalyzeRule + ".csv"
	flagged, err := ReadAnalyze(r.Path(a.File))
	if err != nil {
		a.Note = err.Error()
		return a
	}
	a.Available = true
	a.Flagged = flagged
	return a
}

// maxAnalyzeFile bounds the rule's CSV: a row per flagged copy, a few
// hundred bytes each.
const maxAnalyzeFile = 1 << 30

// ReadAnalyze reads the CSV the cuda_memcpy_async rule writes. A rule that
// found nothing may write an empty file, which gives no rows.
func ReadAnalyze(path string) ([]FlaggedCopy, error) {
	data, err := regular.ReadFile(path, maxAnalyzeFile)
	if err != nil {
		return nil, fmt.Errorf("read the %s rule's output: %w", AnalyzeRule, err)
	}
	rows := []FlaggedCopy{}
	if strings.TrimSpace(string(data)) == "" {
		return rows, nil
	}
	if err := gocsv.UnmarshalBytes(data, &rows); err != nil {
		return nil, fmt.Errorf("%s: cannot read the %s rule's CSV: %w", path, AnalyzeRule, err)
	}
	return rows, nil
}

// AnalyzeAllArg runs the rule with no row limit (by default it lists 50).
const AnalyzeAllArg = AnalyzeRule + ":rows=-1"

// AnalyzeDefaultRows is how many copies the rule lists when not told
// otherwise; a CSV of exactly that many rows was probably cut short.
const AnalyzeDefaultRows = 50

// AnalyzeAll runs the rule with no row limit on an SQLite export, into a
// temporary folder that is removed afterwards, and reads what it flags.
func AnalyzeAll(ctx context.Context, nsysPath, db string) ([]FlaggedCopy, error) {
	tmp, err := os.MkdirTemp("", "nsyscheck-analyze-")
	if err != nil {
		return nil, fmt.Errorf("nsys analyze: %w", err)
	}
	defer os.RemoveAll(tmp)
	base := filepath.Join(tmp, "rule")
	out, err := nsys.CombinedOutput(command(ctx, "", os.Environ(), nsysPath, "analyze", "-r", AnalyzeAllArg, "--format", "csv", "-o", base, db))
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if len(msg) > 300 {
			msg = "..." + msg[len(msg)-300:]
		}
		return nil, fmt.Errorf("nsys analyze failed (%v): %s", err, msg)
	}
	m, _ := filepath.Glob(filepath.Join(tmp, "*"+AnalyzeRule+"*.csv"))
	if len(m) == 0 {
		// A rule that found nothing still writes its (empty) CSV.
		return nil, errors.New("nsys analyze wrote no CSV: " + strings.TrimSpace(string(out)))
	}
	return ReadAnalyze(m[0])
}
