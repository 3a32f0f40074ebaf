package report

import (
	"fmt"
	"io"

	"github.com/nsyscheck/nsyscheck/fleet"
	"github.com/nsyscheck/nsyscheck/internal/textwrap"
	"github.com/nsyscheck/nsyscheck/predictions"
)

// The formats Write renders, as --format names them.
const (
	FormatText     = "text"
	FormatJSON     = "json"
	FormatMarkdown = "markdown"
)

// Formats are the names Write accepts, for flag help and completion.
var Formats = []string{FormatText, FormatJSON, FormatMarkdown}

// WriteOptions shape Write's output.
type WriteOptions struct {
	// Text is the text layout: width and verbosity.
	Text TextOptions
	// Version is the tool's version, recorded in JSON output.
	Version string
	// Fleet, when not nil, is the fleet table over the inputs' run
	// folders: printed after the verdicts in text and Markdown, the
	// envelope's "fleet" in JSON.
	Fleet *fleet.Summary
}

// Write renders results in the named format: text for a terminal (one
// input, or several side by side), JSON in the versioned envelope (one
// object for any number of inputs), or Markdown reports without plots;
// then the fleet table, when there is one.
func Write(w io.Writer, format string, results []*predictions.Result, opts WriteOptions) error {
	var err error
	switch format {
	case FormatJSON:
		env := VerifyEnvelope(results, opts.Version)
		if opts.Fleet != nil {
			f := FleetJSON(*opts.Fleet)
			env.Fleet = &f
		}
		return WriteJSON(w, env)
	case FormatMarkdown:
		err = Markdown(w, results)
	case FormatText:
		err = capped(w, func(w io.Writer) error {
			if len(results) == 1 {
				return Text(w, results[0], opts.Text)
			}
			return TextMulti(w, results, opts.Text)
		})
	default:
		return fmt.Errorf("unknown format %q: use text, json or markdown", format)
	}
	if err != nil {
		return err
	}
	return WriteFleet(w, format, opts.Fleet, opts.Text)
}

// capped runs write on w through textwrap.CapWriter: in text for a
// terminal, a word too long to read (a megabyte NVTX name) is shown by its
// start and its length, wherever the text names it.
func capped(w io.Writer, write func(io.Writer) error) error {
	cw := &textwrap.CapWriter{W: w}
	err := write(cw)
	if ferr := cw.Flush(); err == nil {
		err = ferr
	}
	return err
}
