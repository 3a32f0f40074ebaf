package report

import (
	"fmt"

	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/predictions"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// The words of every typed detail a result carries are made here and only
// here: the renderers of every format and the JSON's transfer types call
// these functions.

// diagView is a diagnostic as every renderer shows it.
type diagView struct {
	Level   diag.Level
	Code    diag.Code
	Message string
}

// diagViews words the diagnostics.
func diagViews(ds []diag.Diagnostic) []diagView {
	out := make([]diagView, len(ds))
	for i, d := range ds {
		out[i] = diagView{Level: d.Level, Code: d.Code(), Message: detailWords(d.Detail)}
	}
	return out
}

// DiagnosticText is what a diagnostic noticed, in the words every format
// shows.
func DiagnosticText(d diag.Diagnostic) string { return detailWords(d.Detail) }

// detailWords is what a diagnostic noticed, in words.
func detailWords(d diag.Detail) string {
	switch d := d.(type) {
	case diag.Note:
		return d.Text
	}
	if s, ok := lessonDetailWords(d); ok {
		return s
	}
	// A detail without words of its own still shows its values.
	return fmt.Sprintf("%+v", d)
}

// relationWord is a comparison's relation as the output spells it: ">=",
// "<", "=", or "within 2x of" (the factor's).
func relationWord(c predictions.Comparison) string {
	switch c.Relation {
	case predictions.AtLeast:
		return ">="
	case predictions.Below:
		return "<"
	case predictions.Equal:
		return "="
	case predictions.Within:
		return fmt.Sprintf("within %gx of", c.Factor)
	}
	return "?"
}

// span is a Within comparison's interval, low and high.
func span(c predictions.Comparison) (lo, hi float64) {
	iv := c.Interval()
	return *iv.Low, *iv.High
}

// threadID names a thread as the output does: "pid/tid".
func threadID(t vocab.Thread) string { return fmt.Sprintf("%d/%d", t.PID, t.TID) }
