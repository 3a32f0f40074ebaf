package predictions

import "github.com/nsyscheck/nsyscheck/diag"

// MapPaths passes every path the result names, and every text from outside
// it that may name one (the capture's own reasons and notes), through f:
// output meant for sharing names folders its own way.
func (r *Result) MapPaths(f func(string) string) {
	in := &r.Input
	in.Path = f(in.Path)
	for i := range in.Files {
		in.Files[i] = f(in.Files[i])
	}
	in.ProgramSource = f(in.ProgramSource)
	for i := range in.SetAside {
		in.SetAside[i].Path = f(in.SetAside[i].Path)
		in.SetAside[i].Reason = f(in.SetAside[i].Reason)
	}
	for i := range r.Claims {
		c := &r.Claims[i]
		mapWhys(c.Why, f)
		c.short = mapWhy(c.short, f)
		for j := range c.Sources {
			c.Sources[j].Why = mapWhy(c.Sources[j].Why, f)
		}
	}
	for i := range r.Predictions {
		for j := range r.Predictions[i].Unchecked {
			u := &r.Predictions[i].Unchecked[j]
			u.Why = mapWhy(u.Why, f)
			mapWhys(u.Whole, f)
		}
	}
	mapWhys(r.Exercise.Why, f)
	diag.MapPaths(r.Diagnostics, f)
}

func mapWhys(ws []SourceWhy, f func(string) string) {
	for i := range ws {
		ws[i].Why = mapWhy(ws[i].Why, f)
	}
}

// mapWhy passes the capture's own words a reason carries through f.
func mapWhy(w Why, f func(string) string) Why {
	switch w := w.(type) {
	case NoAPITrace:
		w.Lacks = f(w.Lacks)
		return w
	case NoCopyRecords:
		w.Lacks = f(w.Lacks)
		return w
	case NoCorrelation:
		w.Lacks = f(w.Lacks)
		return w
	case NoMemoryKinds:
		w.Lacks = f(w.Lacks)
		return w
	case NoKernelRecords:
		w.Lacks = f(w.Lacks)
		return w
	case NeedsPinnedRate:
		w.Why = mapWhy(w.Why, f)
		return w
	}
	return w
}

// MapPaths passes the set-aside file's path and the capture's reason
// through f.
func (s SiblingSetAside) MapPaths(f func(string) string) diag.Detail {
	s.Path, s.Reason = f(s.Path), f(s.Reason)
	return s
}
