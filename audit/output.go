package audit

import "github.com/nsyscheck/nsyscheck/diag"

// MapPaths passes every path the audits and their check name, and the text
// from outside them that may name one (NVIDIA's rule's source and note,
// the loader's notes), through f: output meant for sharing names folders
// its own way.
func (o *Output) MapPaths(f func(string) string) {
	for _, au := range []*Audit{o.Before, o.After} {
		if au == nil {
			continue
		}
		au.Capture = f(au.Capture)
		for i := range au.Files {
			au.Files[i] = f(au.Files[i])
		}
		if au.Link != nil {
			au.Link.File = f(au.Link.File)
		}
		if au.NVIDIA != nil {
			au.NVIDIA.Source.Path = f(au.NVIDIA.Source.Path)
			au.NVIDIA.Source.Text = f(au.NVIDIA.Source.Text)
			au.NVIDIA.Note = f(au.NVIDIA.Note)
		}
		diag.MapPaths(au.Diagnostics, f)
		diag.MapPaths(au.Exposures, f)
		if au.Coverage != nil {
			au.Coverage.MapPaths(f)
		}
	}
	if o.Check != nil {
		o.Check.Before, o.Check.After = f(o.Check.Before), f(o.Check.After)
	}
}
