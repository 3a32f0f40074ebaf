package report

import (
	"fmt"
	"io"
	"strings"

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

// capped runs write on w through a capWriter: in text for a terminal, a
// word too long to read (a megabyte NVTX name) is shown by its start and
// its length, wherever the text names it; and a document written at once
// goes on to w in pieces, as WriteJSON's does.
func capped(w io.Writer, write func(io.Writer) error) error {
	cw := &capWriter{w: w}
	err := write(cw)
	if ferr := cw.Flush(); err == nil {
		err = ferr
	}
	return err
}

// capWriter passes what is written through it to w with textwrap.CapWords
// applied line by line, a line held until its newline or Flush, as
// textwrap.CapWriter does; the lines it passes on go in the pieces
// writeLines cuts them into, so that a writer that masks each write
// (privacy.MaskWriter) masks a piece at a time, as it would mask them
// whole. A document handed over as a string (io.WriteString) is not
// copied.
type capWriter struct {
	w    io.Writer
	held string
}

func (c *capWriter) Write(p []byte) (int, error) {
	if _, err := c.WriteString(string(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (c *capWriter) WriteString(s string) (int, error) {
	n := len(s)
	if c.held != "" {
		s = c.held + s
		c.held = ""
	}
	i := strings.LastIndexByte(s, '\n')
	if i < 0 {
		c.held = s
		return n, nil
	}
	c.held = strings.Clone(s[i+1:])
	if err := writeLines(c.w, textwrap.CapWords(s[:i+1]), jsonPiece); err != nil {
		return 0, err
	}
	return n, nil
}

// Flush writes a last line without its newline.
func (c *capWriter) Flush() error {
	if c.held == "" {
		return nil
	}
	s := c.held
	c.held = ""
	return writeLines(c.w, textwrap.CapWords(s), jsonPiece)
}
