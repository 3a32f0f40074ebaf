package report

import (
	"fmt"
	"io"

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
}

// Write renders results in the named format: text for a terminal (one
// input, or several side by side), JSON in the versioned envelope (one
// object for any number of inputs), or Markdown reports without plots.
func Write(w io.Writer, format string, results []*predictions.Result, opts WriteOptions) error {
	switch format {
	case FormatJSON:
		return WriteJSON(w, VerifyEnvelope(results, opts.Version))
	case FormatMarkdown:
		return Markdown(w, results)
	case FormatText:
		if len(results) == 1 {
			return Text(w, results[0], opts.Text)
		}
		return TextMulti(w, results, opts.Text)
	}
	return fmt.Errorf("unknown format %q: use text, json or markdown", format)
}
