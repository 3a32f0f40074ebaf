// Package csvheader reads the header of an nsys CSV report (an `nsys stats`
// report, NVIDIA's expert rule output) against the columns a reader needs,
// as internal/nsysdb spells them across nsys releases: each header name is
// normalised ("Start (ns)" -> "start" in ns), matched to the column's
// aliases, and its unit turned into a factor.
package csvheader

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

// Norm reduces a header name to a comparable key and its unit:
// "Start (ns)" -> ("start", "ns"), "Thread Name" -> ("threadname", ""),
// "Time(%)" -> ("time", "%"), "T-Pri" -> ("tpri", "").
func Norm(h string) (key, unit string) {
	h = strings.TrimSpace(strings.TrimPrefix(h, "\uFEFF"))
	if i := strings.LastIndexByte(h, '('); i >= 0 && strings.HasSuffix(h, ")") {
		unit = strings.ToLower(strings.TrimSpace(h[i+1 : len(h)-1]))
		h = h[:i]
	}
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch r {
		case ' ', '-', '_', '\t':
		default:
			b.WriteRune(r)
		}
	}
	return b.String(), unit
}

// TimeScale returns the factor that turns a value in unit into nanoseconds.
func TimeScale(unit string) (float64, bool) {
	switch unit {
	case "", "ns":
		return 1, true // "" is refused by Resolve
	case "us", "µs", "μs":
		return 1e3, true
	case "ms":
		return 1e6, true
	case "s", "sec":
		return 1e9, true
	}
	return 0, false
}

// Header maps a report's header onto its columns.
type Header struct {
	Index map[string]int     // field -> column index
	Scale map[string]float64 // field -> factor to ns (time columns)
	Unit  map[string]string  // field -> unit as written
	Names []string           // the header as written
}

// Resolve maps the header of the CSV report at path (of the kind report
// names, for messages) onto cols: each column's index, unit and, for a
// time, the factor to nanoseconds. A required column absent, a column
// twice, or a time without a unit or with one it does not know is an
// *inputerr.Error that names the column.
func Resolve(path, report string, header []string, cols []nsysdb.ReportColumn) (*Header, error) {
	rh := &Header{Index: map[string]int{}, Scale: map[string]float64{}, Unit: map[string]string{}, Names: header}
	seen := map[string]int{} // normalised header key -> first column
	for i, h := range header {
		key, unit := Norm(h)
		for _, col := range cols {
			for _, a := range col.Aliases {
				if key != a {
					continue
				}
				if j, dup := seen[key]; dup {
					// Two columns that read the same: which one holds the
					// values is anyone's guess.
					return nil, &inputerr.Error{Path: path, Where: "column " + strconv.Quote(strings.TrimPrefix(h, "\uFEFF")),
						Problem: fmt.Sprintf("this %s report has the column twice (columns %d and %d)", report, j+1, i+1),
						Hint:    "make the report again with nsys stats --report " + report + " --format csv"}
				}
				seen[key] = i
				if _, dup := rh.Index[col.Field]; dup {
					continue // another name for a column already found
				}
				rh.Index[col.Field] = i
				rh.Unit[col.Field] = unit
				if col.Time {
					s, ok := TimeScale(unit)
					if !ok {
						return nil, &inputerr.Error{Path: path, Where: "column " + strconv.Quote(h),
							Problem: "unknown time unit " + strconv.Quote(unit) + " in a " + report + " report",
							Hint:    "export with nsys stats --timeunit nsec"}
					}
					if unit == "" {
						return nil, &inputerr.Error{Path: path, Where: "column " + strconv.Quote(h),
							Problem: "the time column has no unit, so its values could be ns, us, ms or s",
							Hint:    "make the report with nsys stats --format csv, which writes the unit, e.g. \"Duration (ns)\""}
					}
					rh.Scale[col.Field] = s
				}
			}
		}
	}
	for _, col := range cols {
		if _, ok := rh.Index[col.Field]; !ok && col.Required {
			quoted := make([]string, len(header))
			for i, h := range header {
				quoted[i] = strconv.Quote(strings.TrimPrefix(h, "\uFEFF"))
			}
			return nil, &inputerr.Error{Path: path, Where: "column " + strconv.Quote(col.Display),
				Problem: "this " + report + " report has no " + strconv.Quote(col.Display) +
					" column; columns found: " + strings.Join(quoted, ", "),
				Hint: "make the report with nsys stats --report " + report +
					" --format csv; a renamed column may come from an nsys release this tool does not know"}
		}
	}
	return rh, nil
}

// SizeScale turns the size report's unit into megabytes (1e6 bytes).
func SizeScale(unit string) (float64, bool) {
	switch unit {
	case "", "mb":
		return 1, true
	case "kb":
		return 1e-3, true
	case "gb":
		return 1e3, true
	case "b":
		return 1e-6, true
	case "mib":
		return 1.048576, true
	case "kib":
		return 1.024e-3, true
	case "gib":
		return 1073.741824, true
	}
	return 0, false
}
