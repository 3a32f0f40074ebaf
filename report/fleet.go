package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/nsyscheck/nsyscheck/fleet"
)

// WriteFleet prints the fleet table after the verdicts in text (laid out
// for opts' width) and Markdown; JSON carries the table in its envelope
// (VerifyEnvelope) and the findings as fleet-outlier diagnostics of the
// results, so it prints nothing here. A nil summary prints nothing.
func WriteFleet(w io.Writer, format string, s *fleet.Summary, opts TextOptions) error {
	if s == nil {
		return nil
	}
	switch format {
	case FormatText:
		fmt.Fprintln(w)
		return FleetText(w, *s, opts)
	case FormatMarkdown:
		fmt.Fprintln(w)
		return FleetMarkdown(w, *s)
	}
	return nil
}

// FleetMarkdownFile is the name of the fleet page report writes beside the
// per-input reports.
const FleetMarkdownFile = "fleet.md"

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

// FleetText writes the fleet table and its findings for a terminal of
// opts' width: a table wider than the line is split into several, each
// repeating the RUN column, and the findings are wrapped beneath it.
func FleetText(w io.Writer, s fleet.Summary, opts TextOptions) error {
	width := opts.width()
	var b strings.Builder
	writeWrapped(&b, "fleet: pinned copies at the largest size against each GPU's rated link and its peers", width, "", "    ")
	b.WriteByte('\n')
	rows := [][]string{fleetHeader}
	for _, r := range s.Rows {
		rows = append(rows, fleetCells(r))
	}
	writeTable(&b, rows, 1, width)
	b.WriteString("\n")
	var f strings.Builder
	fleetFindings(&f, s, "")
	for _, line := range strings.Split(strings.TrimSuffix(f.String(), "\n"), "\n") {
		writeWrapped(&b, line, width, "", "    ")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// FleetMarkdown writes the fleet table and its findings as Markdown.
func FleetMarkdown(w io.Writer, s fleet.Summary) error {
	var b strings.Builder
	b.WriteString("## Fleet\n\nPinned copies at the largest size against each GPU's rated PCIe link and its peers (the other GPUs of the same model).\n\n")
	rows := make([][]string, len(s.Rows))
	for i, r := range s.Rows {
		rows[i] = fleetCells(r)
	}
	mdGrid(&b, fleetHeader, rows)
	b.WriteString("\n")
	fleetFindings(&b, s, "- ")
	_, err := io.WriteString(w, b.String())
	return err
}

// mdGrid writes a Markdown table of the header and rows, the cells' bars
// escaped.
func mdGrid(b *strings.Builder, header []string, rows [][]string) {
	b.WriteString("| " + strings.Join(header, " | ") + " |\n|" + strings.Repeat("---|", len(header)) + "\n")
	for _, cells := range rows {
		esc := make([]string, len(cells))
		for i, c := range cells {
			esc[i] = strings.ReplaceAll(c, "|", `\|`)
		}
		b.WriteString("| " + strings.Join(esc, " | ") + " |\n")
	}
}

func fleetFindings(b *strings.Builder, s fleet.Summary, bullet string) {
	if len(s.Findings) == 0 {
		fmt.Fprintf(b, "%sno outlier: every GPU reaches %.0f%% of its rated link and %.0f%% of its peers' median in both directions\n",
			bullet, 100*s.Thresholds.BelowRated, 100*s.Thresholds.BelowPeers)
		return
	}
	for _, f := range s.Findings {
		fmt.Fprintf(b, "%soutlier %s: %s\n", bullet, f.Kind, findingWords(f))
	}
}

// findingWords says how far a GPU falls below its link or its peers, and
// what most likely explains it.
func findingWords(f fleet.Finding) string {
	where := f.Name
	if f.GPU >= 0 {
		where = fmt.Sprintf("%s (GPU %d)", f.Name, f.GPU)
	}
	var s string
	if f.Kind == "below-peers" {
		s = fmt.Sprintf("%s: pinned %s %.1f GB/s is %.0f%% of the median %.1f GB/s of its %d peer(s) (%s), under %.0f%%",
			where, strings.ToUpper(f.Direction), f.Got, 100*f.Share, f.PeerMedian, f.Peers, f.Model, 100*f.Threshold)
	} else {
		s = fmt.Sprintf("%s: pinned %s %.1f GB/s is %.0f%% of its rated PCIe %s (%.1f GB/s), under %.0f%%",
			where, strings.ToUpper(f.Direction), f.Got, 100*f.Share, linkText(f.Link), f.RatedGBps, 100*f.Threshold)
	}
	switch f.Cause {
	case fleet.CauseShared:
		return s + ": the GPU was shared with other work during the run, which alone can explain it: run it again on an idle GPU before suspecting the link"
	case fleet.CauseLinkOrNUMA:
		return s + ": the link may be trained down (check nvidia-smi -q: PCIe generation and width, now and max), or the program's host memory lay on a remote NUMA node (it was not bound)"
	}
	return s + ": the link may be trained down (check nvidia-smi -q: PCIe generation and width, now and max)"
}

// JSONFleet is the fleet table's JSON: its rows and findings, their links,
// verdicts and messages in words.
type JSONFleet struct {
	Thresholds fleet.Thresholds `json:"thresholds"`
	Rows       []jsonFleetRow   `json:"rows"`
	Findings   []jsonFinding    `json:"findings"`
}

// jsonFleetRow is one row of the fleet table, its fields in the order
// docs/output.schema.json lists them.
type jsonFleetRow struct {
	Name      string  `json:"name"`
	Host      string  `json:"host,omitempty"`
	GPU       int     `json:"gpu"`
	Model     string  `json:"model,omitempty"`
	BusID     string  `json:"busId,omitempty"`
	NUMANode  int     `json:"numaNode"`
	Binding   string  `json:"binding,omitempty"`
	Link      string  `json:"link,omitempty"`
	RatedGBps float64 `json:"ratedGBps,omitempty"`
	H2DGBps   float64 `json:"h2dGBps,omitempty"`
	D2HGBps   float64 `json:"d2hGBps,omitempty"`
	From      string  `json:"from,omitempty"`
	Shared    bool    `json:"shared,omitempty"`
	Verdicts  string  `json:"verdicts,omitempty"`
	H2DShare  float64 `json:"h2dShare,omitempty"`
	D2HShare  float64 `json:"d2hShare,omitempty"`
	PeerH2D   float64 `json:"peerH2DGBps,omitempty"`
	PeerD2H   float64 `json:"peerD2HGBps,omitempty"`
	Peers     int     `json:"peers"`
	Outlier   bool    `json:"outlier"`
}

type jsonFinding struct {
	fleet.Finding
	Message string `json:"message"`
}

// FleetJSON is the fleet table's JSON form, for the envelope and
// summary.json.
func FleetJSON(s fleet.Summary) JSONFleet {
	j := JSONFleet{Thresholds: s.Thresholds, Rows: []jsonFleetRow{}, Findings: []jsonFinding{}}
	for _, r := range s.Rows {
		j.Rows = append(j.Rows, jsonFleetRow{Name: r.Name, Host: r.Host, GPU: r.GPU, Model: r.Model, BusID: r.BusID,
			NUMANode: r.NUMANode, Binding: r.Binding, Link: linkText(r.Link), RatedGBps: r.RatedGBps, H2DGBps: r.H2DGBps,
			D2HGBps: r.D2HGBps, From: r.From, Shared: r.Shared, Verdicts: verdictsText(r.Entry), H2DShare: r.H2DShare,
			D2HShare: r.D2HShare, PeerH2D: r.PeerH2D, PeerD2H: r.PeerD2H, Peers: r.Peers, Outlier: r.Outlier})
	}
	for _, f := range s.Findings {
		j.Findings = append(j.Findings, jsonFinding{Finding: f, Message: findingWords(f)})
	}
	return j
}

// fleetNum prints a number of the table, "-" where it is unknown (0).
func fleetNum(v float64, format string) string {
	if v == 0 || math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

// dash stands in for an empty cell.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
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
	return []string{dash(r.Name), dash(r.Host), gpu, dash(r.Model), node, dash(linkText(r.Link)), fleetNum(r.RatedGBps, "%.1f"),
		fleetNum(r.H2DGBps, "%.1f"), fleetNum(100*r.H2DShare, "%.0f%%"), fleetNum(r.D2HGBps, "%.1f"), fleetNum(100*r.D2HShare, "%.0f%%"),
		dash(verdictsText(r.Entry)), dash(mark)}
}

// linkText names a PCIe link: "Gen5 x16", "Gen5 x16 (seen Gen4 x16)";
// "" where unknown.
func linkText(l fleet.Link) string {
	if l.Gen == 0 {
		return ""
	}
	s := fmt.Sprintf("Gen%d x%d", l.Gen, l.Width)
	if l.SeenGen != 0 || l.SeenWidth != 0 {
		s += fmt.Sprintf(" (seen Gen%d x%d)", l.SeenGen, l.SeenWidth)
	}
	return s
}

// verdictsText sums up a run's predictions: "4/4 held"; "" where none.
func verdictsText(e fleet.Entry) string {
	if e.Predictions == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d held", e.Held, e.Predictions)
}
