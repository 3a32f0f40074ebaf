package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/nsyscheck/nsyscheck/fleet"
)

// WriteFleet prints the fleet table after the verdicts in text and
// Markdown; JSON carries its findings as fleet-outlier diagnostics of the
// results instead, so it prints nothing here. A nil summary prints nothing.
func WriteFleet(w io.Writer, format string, s *fleet.Summary) error {
	if s == nil {
		return nil
	}
	switch format {
	case FormatText:
		fmt.Fprintln(w)
		return FleetText(w, *s)
	case FormatMarkdown:
		fmt.Fprintln(w)
		return FleetMarkdown(w, *s)
	}
	return nil
}

// FleetFile is the content of the fleet.md page report writes beside the
// per-input reports.
func FleetFile(s fleet.Summary) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("# Fleet\n\n")
	if err := FleetMarkdown(&b, s); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

var fleetHeader = []string{"RUN", "HOST", "GPU", "MODEL", "NUMA", "LINK", "RATED GB/s", "H2D GB/s", "H2D/RATED", "D2H GB/s", "D2H/RATED", "VERDICTS", "NOTE"}

// FleetText writes the fleet table and its findings for a terminal.
func FleetText(w io.Writer, s fleet.Summary) error {
	var b strings.Builder
	b.WriteString("fleet: pinned copies at the largest size against each GPU's rated link and its peers\n\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(fleetHeader, "\t"))
	for _, r := range s.Rows {
		fmt.Fprintln(tw, strings.Join(fleetCells(r), "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("\n")
	fleetFindings(&b, s, "")
	_, err := io.WriteString(w, b.String())
	return err
}

// FleetMarkdown writes the fleet table and its findings as Markdown.
func FleetMarkdown(w io.Writer, s fleet.Summary) error {
	var b strings.Builder
	b.WriteString("## Fleet\n\nPinned copies at the largest size against each GPU's rated PCIe link and its peers (the other GPUs of the same model).\n\n")
	b.WriteString("| " + strings.Join(fleetHeader, " | ") + " |\n|" + strings.Repeat("---|", len(fleetHeader)) + "\n")
	for _, r := range s.Rows {
		cells := fleetCells(r)
		for i := range cells {
			cells[i] = strings.ReplaceAll(cells[i], "|", `\|`)
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	b.WriteString("\n")
	fleetFindings(&b, s, "- ")
	_, err := io.WriteString(w, b.String())
	return err
}

func fleetFindings(b *strings.Builder, s fleet.Summary, bullet string) {
	if len(s.Findings) == 0 {
		fmt.Fprintf(b, "%sno outlier: every GPU reaches %.0f%% of its rated link and %.0f%% of its peers' median in both directions\n",
			bullet, 100*s.Thresholds.BelowRated, 100*s.Thresholds.BelowPeers)
		return
	}
	for _, f := range s.Findings {
		fmt.Fprintf(b, "%soutlier %s: %s\n", bullet, f.Kind, f.Message)
	}
}

// fleetNum prints a number of the table, "-" where it is unknown (0).
func fleetNum(v float64, format string) string {
	if v == 0 || math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

func fleetCells(r fleet.Row) []string {
	gpu, node := "-", "-"
	if r.GPU >= 0 {
		gpu = fmt.Sprint(r.GPU)
	}
	if r.NUMANode >= 0 {
		node = fmt.Sprint(r.NUMANode)
	}
	if r.Binding != "" {
		node += " (" + r.Binding + ")"
	}
	mark := ""
	if r.Outlier {
		mark = "OUTLIER"
	}
	if r.Shared {
		mark = strings.TrimSpace(mark + " shared")
	}
	return []string{dash(r.Name), dash(r.Host), gpu, dash(r.Model), node, dash(r.Link), fleetNum(r.RatedGBps, "%.1f"),
		fleetNum(r.H2DGBps, "%.1f"), fleetNum(100*r.H2DShare, "%.0f%%"), fleetNum(r.D2HGBps, "%.1f"), fleetNum(100*r.D2HShare, "%.0f%%"),
		dash(r.Verdicts), dash(mark)}
}
