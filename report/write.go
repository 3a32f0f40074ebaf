package report

import (
	"encoding/json"
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

// Write renders results in the named format: a plain-text table (one input,
// or several side by side), the results as JSON (one object, or an array
// for several), or Markdown reports without plots.
func Write(w io.Writer, format string, results []*predictions.Result) error {
	switch format {
	case FormatJSON:
		return JSON(w, results)
	case FormatMarkdown:
		return Markdown(w, results)
	case FormatText:
		if len(results) == 1 {
			return Text(w, results[0])
		}
		return TextMulti(w, results)
	}
	return fmt.Errorf("unknown format %q: use text, json or markdown", format)
}

// JSON writes one result as an indented JSON object, several as an array.
func JSON(w io.Writer, results []*predictions.Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if len(results) == 1 {
		return enc.Encode(results[0])
	}
	return enc.Encode(results)
}
