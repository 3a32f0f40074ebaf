package predictions

// Table is a part's table of numbers as the reports show it: its lesson
// title and columns, its rows of typed cells, whose numbers they are, the
// notes beside it, and why it is empty where it is.
type Table struct {
	Title   string
	Columns []Column
	Rows    [][]Cell
	// From is whose numbers the rows are; "" where there are none.
	From Source
	// Notes are further facts shown beside the table.
	Notes []Fact
	// Missing says why the table has no rows.
	Missing string
}

// Column is a table's column: its head, and whether it is right-aligned.
type Column struct {
	Head  string
	Right bool
}

// CellKind says what a table cell holds, and so how it is written.
type CellKind int

// Cell kinds.
const (
	CellNone  CellKind = iota // no value: a dash
	CellWord                  // Word
	CellSize                  // X bytes
	CellMs                    // X milliseconds
	CellGBps                  // X GB/s
	CellRatio                 // X, a ratio ("6.70x"; none at 0)
	CellShare                 // X, a share written as a percentage
)

// Cell is one table cell.
type Cell struct {
	Kind CellKind
	X    float64
	Word string
}

// Cells of each kind.
func wordCell(w string) Cell   { return Cell{Kind: CellWord, Word: w} }
func sizeCell(b int64) Cell    { return Cell{Kind: CellSize, X: float64(b)} }
func msCell(ms float64) Cell   { return Cell{Kind: CellMs, X: ms} }
func gbpsCell(g float64) Cell  { return Cell{Kind: CellGBps, X: g} }
func ratioCell(r float64) Cell { return Cell{Kind: CellRatio, X: r} }
func shareCell(s float64) Cell { return Cell{Kind: CellShare, X: s} }

// ScaleNote sets part 3's bandwidths beside the device-to-device copy of
// the same run, from its source.
type ScaleNote struct {
	GBps float64
	From Source
}

func (ScaleNote) isFact() {}

// Preferred is the source whose rows a table or plot shows: the trace's
// where the input has any, else the program's, else the first, else "".
func Preferred(froms []Source) Source {
	has := map[Source]bool{}
	for _, f := range froms {
		has[f] = true
	}
	switch {
	case has[SourceTrace]:
		return SourceTrace
	case has[SourceProgram]:
		return SourceProgram
	case len(froms) > 0:
		return froms[0]
	}
	return ""
}

// PreferredOf is Preferred over the sources of rows, as from reads them.
func PreferredOf[T any](rows []T, from func(T) Source) Source {
	var froms []Source
	for _, row := range rows {
		froms = append(froms, from(row))
	}
	return Preferred(froms)
}
