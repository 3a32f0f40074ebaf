package predictions

import (
	"fmt"
	"sort"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/diag"
)

// The lesson as data: each prediction is a Part that owns its claims (their
// statements made of the criteria's constants), the CUDA calls whose
// records its reading needs, how it reads each source's numbers, the rows it
// adds to the result, its tables and its chart. Evaluate and every
// renderer iterate Lesson; adding a prediction is adding a Part.

// Part is one of the lesson's predictions.
type Part struct {
	// ID numbers the prediction; claims are numbered "ID.name".
	ID int
	// Topic says what the prediction is about, as the reports title it.
	Topic string
	// Claims are the prediction's claims, in order.
	Claims []ClaimSpec
	// APINames are the CUDA calls whose records its reading of a trace
	// needs, for capture.Options.APINames.
	APINames []string
	// Read fills the part's numbers from one source (in.Trace for the
	// trace, in.Program for the program's numbers), in Lesson's order: a
	// part may read what an earlier part filled. Nil reads nothing.
	Read func(in *Reading, n *Numbers)
	// Rows name the part's rows in the result (and its JSON); AddRows adds
	// one source's. Nil: the part adds none.
	Rows    RowSetKey
	AddRows func(n *Numbers, r *Result)
	// Notice adds what the part notices in one source's numbers once every
	// claim is judged. Nil: nothing.
	Notice func(n *Numbers, d *diag.List)
	// Tables are the part's tables of numbers in the reports; Chart its
	// plot. Nil: none.
	Tables func(r *Result) []Table
	Chart  func(r *Result) Chart
}

// ClaimSpec is one claim of a part and how each source answers it.
type ClaimSpec struct {
	// ID is "prediction.name", e.g. "1.floor".
	ID string
	// Statement says what the claim holds, its thresholds the criteria's
	// constants; Unit names what Measured counts.
	Statement Words
	Unit      Words
	// Compare is the claim's test (for a bound one source computes, its
	// Bound is 0 and the source's Outcome sets it).
	Compare Comparison
	// Control names a check that guards the prediction's comparison rather
	// than stating its claim ("bytes"): its verdict kills the prediction
	// when it died and is named beside it when the input cannot check it.
	Control string
	// Eval answers the claim from one source's numbers.
	Eval func(n *Numbers) Outcome
}

// Outcome is one source's answer to one claim.
type Outcome struct {
	Verdict  Verdict
	Measured *float64
	Bound    float64
	Evidence []Evidence
	// Why is why the source cannot answer, with Verdict Unavailable;
	// Short the same in a few words, for a control's unchecked note.
	Why   Why
	Short Why
}

// UnavailableOutcome is the outcome of a source that cannot answer, and why.
func UnavailableOutcome(why Why) Outcome { return Outcome{Verdict: Unavailable, Why: why} }

// Registry is the lesson's parts, in order.
type Registry struct{ parts []*Part }

// Lesson is the pinned-memory lesson's four predictions.
var Lesson = &Registry{parts: []*Part{&part1, &part2, &part3, &part4}}

// Parts are the registry's parts in order.
func (g *Registry) Parts() []*Part { return g.parts }

// Part is the part with the id, nil where there is none.
func (g *Registry) Part(id int) *Part {
	for _, p := range g.parts {
		if p.ID == id {
			return p
		}
	}
	return nil
}

// Register adds a part, ordered by id, and returns the function that
// takes it out again. A part with the id of one registered already is
// refused.
func (g *Registry) Register(p *Part) (remove func(), err error) {
	if g.Part(p.ID) != nil {
		return nil, fmt.Errorf("prediction %d is registered already", p.ID)
	}
	g.parts = append(g.parts, p)
	sort.SliceStable(g.parts, func(i, j int) bool { return g.parts[i].ID < g.parts[j].ID })
	return func() {
		for i, q := range g.parts {
			if q == p {
				g.parts = append(g.parts[:i:i], g.parts[i+1:]...)
				return
			}
		}
	}, nil
}

// Names lists the CUDA API names the lesson's parts read, for
// capture.Options.APINames.
func Names() []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range Lesson.Parts() {
		for _, n := range p.APINames {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}

// Reading is what a part reads its numbers from: the capture, and for the
// trace the program's thread's records, or why there are none.
type Reading struct {
	Capture *capture.Capture
	// From says which source is being read.
	From     Source
	trace    *traceCtx
	traceWhy Why
	diags    *diagList
}

// Numbers are what one source (the trace, or the program's numbers)
// offers the claims: each part's, filled by its Read, in typed slots.
type Numbers struct {
	// From is the source.
	From Source
	// File is the program's numbers file, for evidence; "" for the trace.
	File  string
	slots map[any]slotValue
	// The device-to-device reference copy, where the source has one.
	deviceGBps float64
	deviceFrom *DeviceCopyFrom
	// untrusted, where set, is why none of the numbers may decide: the
	// program's correctness gate failed.
	untrusted Why
}

type slotValue struct {
	v          any
	why, short Why
}

// Slot is a typed place in Numbers for a part's numbers of type T.
type Slot[T any] struct{ name string }

// NewSlot returns a slot, named for what it holds.
func NewSlot[T any](name string) *Slot[T] { return &Slot[T]{name: name} }

// Set fills the slot in n: v, or why there is none (with short, a few
// words of it, where there are).
func (s *Slot[T]) Set(n *Numbers, v T, why Why) {
	cur := n.slots[s]
	cur.v, cur.why = v, why
	n.slots[s] = cur
}

// SetShort sets the few words of why the slot is empty.
func (s *Slot[T]) SetShort(n *Numbers, short Why) {
	cur := n.slots[s]
	cur.short = short
	n.slots[s] = cur
}

// Get returns the slot's value in n, or its zero value and why there is
// none.
func (s *Slot[T]) Get(n *Numbers) (T, Why) {
	cur := n.slots[s]
	v, _ := cur.v.(T)
	return v, cur.why
}

// Short returns the few words of why the slot is empty, nil where none.
func (s *Slot[T]) Short(n *Numbers) Why { return n.slots[s].short }

// Line is one evidence line of n: numbers read from table (a trace) or
// from n's file (the program's numbers), the records behind them, and what
// the line says.
func (n *Numbers) Line(table string, recs []Records, f Fact) Evidence {
	e := Evidence{Source: n.From, Fact: f, Records: recs}
	if n.File != "" {
		e.File = n.File
	} else {
		e.Table = table
	}
	return e
}

// RowSet is a part's rows in a result: their name (and JSON name) and the
// rows, a []T.
type RowSet struct {
	Name string
	Rows any
}

// RowSetKey names a part's rows; RowKey[T] is the one kind there is.
type RowSetKey interface {
	start(r *Result)
}

// RowKey names a part's rows of type T in a result.
type RowKey[T any] struct{ Name string }

func (k RowKey[T]) start(r *Result) {
	if k.at(r) < 0 {
		r.rows = append(r.rows, RowSet{Name: k.Name, Rows: []T{}})
	}
}

func (k RowKey[T]) at(r *Result) int {
	for i, s := range r.rows {
		if s.Name == k.Name {
			return i
		}
	}
	return -1
}

// Of are the result's rows of the key, nil where it has none.
func (k RowKey[T]) Of(r *Result) []T {
	if i := k.at(r); i >= 0 {
		rows, _ := r.rows[i].Rows.([]T)
		return rows
	}
	return nil
}

// Add appends rows to the result's rows of the key.
func (k RowKey[T]) Add(r *Result, rows ...T) {
	k.start(r)
	i := k.at(r)
	r.rows[i].Rows = append(r.rows[i].Rows.([]T), rows...)
}

// Set replaces the result's rows of the key.
func (k RowKey[T]) Set(r *Result, rows []T) {
	k.start(r)
	r.rows[k.at(r)].Rows = append([]T{}, rows...)
}

// RowSets are the result's rows, part by part in Lesson's order.
func (r *Result) RowSets() []RowSet { return r.rows }
