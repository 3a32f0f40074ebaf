// Package diag is the one shape of what nsyscheck says about an input
// beside its verdicts or its audit: a level, and a typed detail that names
// the kind of thing noticed (its code) and holds the numbers and names it
// rests on. Every producer (predictions, check, audit, privacy, fleet)
// makes its own details; report alone puts them into words.
package diag

import "reflect"

// Code names a kind of diagnostic, as the output spells it
// ("open-nvtx-range", "capture-exposes"). Each producer declares its own.
type Code string

// Level is a diagnostic's severity.
type Level string

// Levels.
const (
	Info    Level = "info"
	Warning Level = "warning"
	Error   Level = "error"
)

// Detail is what a diagnostic noticed: typed values, never a sentence.
// Its Code names its kind.
type Detail interface {
	Code() Code
}

// Diagnostic is one thing noticed about an input.
type Diagnostic struct {
	Level  Level
	Detail Detail
}

// Code is the diagnostic's code, its detail's.
func (d Diagnostic) Code() Code { return d.Detail.Code() }

// Note is a detail whose only content is text made outside the result
// model: a loader's note about the input it read, another tool's error.
// It is carried as it came, never read back.
type Note struct {
	Of   Code
	Text string
}

// Code is the note's code.
func (n Note) Code() Code { return n.Of }

// List collects diagnostics, each equal one once.
type List struct{ items []Diagnostic }

// Add appends a diagnostic unless an equal one is there already.
func (l *List) Add(level Level, d Detail) {
	for _, x := range l.items {
		if x.Level == level && reflect.DeepEqual(x.Detail, d) {
			return
		}
	}
	l.items = append(l.items, Diagnostic{Level: level, Detail: d})
}

// Items are the diagnostics in the order added; never nil.
func (l *List) Items() []Diagnostic {
	if l.items == nil {
		return []Diagnostic{}
	}
	return l.items
}

// Has reports whether any of ds has the code.
func Has(ds []Diagnostic, code Code) bool {
	for _, d := range ds {
		if d.Code() == code {
			return true
		}
	}
	return false
}

// PathMapper is a detail that names paths or carries text from outside the
// result model that may name them: MapPaths returns it with each passed
// through f (output meant for sharing names folders its own way).
type PathMapper interface {
	MapPaths(f func(string) string) Detail
}

// MapPaths passes the paths of every diagnostic's detail through f.
func MapPaths(ds []Diagnostic, f func(string) string) {
	for i, d := range ds {
		if m, ok := d.Detail.(PathMapper); ok {
			ds[i].Detail = m.MapPaths(f)
		}
	}
}

// MapPaths passes the note's text through f.
func (n Note) MapPaths(f func(string) string) Detail { n.Text = f(n.Text); return n }
