// Package report turns one evaluated capture into reports for people: a
// Markdown file and a self-contained HTML file in the lesson's shape (its
// results tables, what the run said about each prediction, the exercise,
// diagnostics) with plots of the numbers behind the verdicts, drawn as PNG
// and SVG.
//
// A plot whose data the input does not hold is not drawn; the report says
// which and why.
package report

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/nsyscheck/nsyscheck/predictions"
	"github.com/nsyscheck/nsyscheck/runinfo"

	"gonum.org/v1/plot/plotter"
)

// File names a report directory holds.
const (
	MarkdownFile = "report.md"
	HTMLFile     = "report.html"
)

// Link is the GPU's PCI Express link, as far as it is known.
type Link struct {
	// RatedGBps is the rated bandwidth per direction in GB/s; 0 when unknown.
	RatedGBps float64
	// Gen and Width describe the link when known (0 otherwise).
	Gen, Width int
}

// LinkOf is the plot's view of a run's PCIe link.
func LinkOf(p runinfo.PCIe) Link {
	return Link{RatedGBps: p.RatedGBps, Gen: p.GenMax, Width: p.WidthMax}
}

// name is the link's generation and width, or "PCIe" when unknown.
func (l Link) name() string {
	if l.Gen > 0 && l.Width > 0 {
		return fmt.Sprintf("PCIe Gen%d x%d", l.Gen, l.Width)
	}
	return "PCIe"
}

func (l Link) label() string {
	if l.Gen > 0 && l.Width > 0 {
		return fmt.Sprintf("PCIe Gen%d x%d rated %.1f GB/s", l.Gen, l.Width, l.RatedGBps)
	}
	return fmt.Sprintf("PCIe rated %.1f GB/s", l.RatedGBps)
}

// Options shape a report.
type Options struct {
	// Link draws the PCIe link's rated bandwidth on the bandwidth plot.
	Link Link
	// Title replaces the report's heading.
	Title string
	// NoPlots leaves the plots out (for a report printed to a terminal);
	// the report then says how to get them.
	NoPlots bool
}

// Plot is one drawn plot, or the reason it was not drawn.
type Plot struct {
	// Name is the file name without extension, e.g. "bandwidth".
	Name    string
	Title   string
	Caption string
	// Skipped is why the plot was not drawn; PNG and SVG are then nil.
	Skipped string
	PNG     []byte
	SVG     []byte
	// Series are the values drawn, by series name: (x, y) of each point or
	// bar, as the plot placed them.
	Series map[string]plotter.XYs
}

// PNGFile and SVGFile are the plot's file names in a report directory.
func (p *Plot) PNGFile() string { return p.Name + ".png" }

// SVGFile is the plot's SVG file name.
func (p *Plot) SVGFile() string { return p.Name + ".svg" }

// Undrawn names the files of the plots the report does not draw (skipped
// for want of data), which an earlier report in its folder may have left.
func (rep *Report) Undrawn() []string {
	var out []string
	for i := range rep.Plots {
		if p := &rep.Plots[i]; p.PNG == nil {
			out = append(out, p.PNGFile(), p.SVGFile())
		}
	}
	return out
}

// Report is one input's report.
type Report struct {
	Result  *predictions.Result
	Options Options
	Plots   []Plot
}

// Build draws the plots for r. It fails only when a plot cannot be drawn
// from data the input does hold.
func Build(r *predictions.Result, opts Options) (*Report, error) {
	rep := &Report{Result: r, Options: opts}
	if opts.NoPlots {
		return rep, nil
	}
	makers := chartMakers(r, opts.Link)
	// Each plot is drawn and rendered on its own goroutine: rendering
	// dominates a report's cost, and the plots share nothing.
	plots := make([]Plot, len(makers))
	errs := make([]error, len(makers))
	var wg sync.WaitGroup
	for i, mk := range makers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ch, err := mk()
			if err != nil {
				errs[i] = fmt.Errorf("plot %s: %w", ch.name, err)
				return
			}
			pl := Plot{Name: ch.name, Title: ch.title, Caption: ch.caption, Skipped: ch.skipped, Series: ch.series}
			if ch.plot != nil {
				if pl.PNG, pl.SVG, err = render(ch.plot); err != nil {
					errs[i] = fmt.Errorf("plot %s: %w", ch.name, err)
					return
				}
			}
			plots[i] = pl
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	rep.Plots = plots
	return rep, nil
}

// chartMakers lists the report's plots, each part's of the Lesson in
// order, each still to be made.
func chartMakers(r *predictions.Result, link Link) []func() (chart, error) {
	var out []func() (chart, error)
	for _, p := range predictions.Lesson.Parts() {
		if p.Chart == nil {
			continue
		}
		of := p.Chart
		out = append(out, func() (chart, error) { return drawChart(r, of(r), link) })
	}
	return out
}

// Names lists the files Files returns for r's report under opts, without
// drawing anything: report.md, report.html, and the PNG and SVG of each
// plot the input has the data for. A caller checks them against what a
// folder holds before it pays for drawing.
func Names(r *predictions.Result, opts Options) []string {
	names := []string{MarkdownFile, HTMLFile}
	if opts.NoPlots {
		return names
	}
	for _, p := range predictions.Lesson.Parts() {
		if p.Chart == nil {
			continue
		}
		if c := p.Chart(r); c.Skipped == "" {
			names = append(names, plotFiles(c.Name)...)
		}
	}
	return names
}

// plotFiles are the PNG and SVG file names of the plot named name.
func plotFiles(name string) []string {
	p := Plot{Name: name}
	return []string{p.PNGFile(), p.SVGFile()}
}

// Markdown renders the report as Markdown; images are linked by their file
// names, relative to the report.
func (rep *Report) Markdown() []byte {
	var b bytes.Buffer
	writeMarkdown(&b, rep.view())
	return b.Bytes()
}

// HTML renders the report as one HTML file with its plots inline.
func (rep *Report) HTML() ([]byte, error) {
	var b bytes.Buffer
	if err := writeHTML(&b, rep.view(), rep.Plots); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Files returns every file of the report by name: report.md, report.html
// and each drawn plot's PNG and SVG.
func (rep *Report) Files() (map[string][]byte, error) {
	html, err := rep.HTML()
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{MarkdownFile: rep.Markdown(), HTMLFile: html}
	for i := range rep.Plots {
		p := &rep.Plots[i]
		if p.PNG != nil {
			files[p.PNGFile()] = p.PNG
			files[p.SVGFile()] = p.SVG
		}
	}
	return files, nil
}

// ExistsError is a refusal to replace files already in a report directory.
type ExistsError struct {
	Dir   string
	Names []string
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%s already holds %s; not replacing them (use --force to overwrite)", e.Dir, strings.Join(e.Names, ", "))
}

// WriteDir writes the report's files into dir, creating it if needed, and
// returns their paths. Unless overwrite is set it writes nothing when any
// of the files exists already, and returns an *ExistsError.
func (rep *Report) WriteDir(dir string, overwrite bool) ([]string, error) {
	files, err := rep.Files()
	if err != nil {
		return nil, err
	}
	return WriteFiles(dir, files, overwrite)
}

// names lists the files' names, sorted.
func names(files map[string][]byte) []string {
	out := make([]string, 0, len(files))
	for n := range files {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// WriteFiles writes files (by name) into dir as a report's own files are
// written (atomically, never through a link, plain text masked) and returns
// their paths. Unless overwrite is set it writes nothing when any of the
// files exists already, and returns an *ExistsError.
func WriteFiles(dir string, files map[string][]byte, overwrite bool) ([]string, error) {
	return writeFiles(dir, files, overwrite)
}
