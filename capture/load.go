package capture

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

// Load reads whatever path holds:
//
//   - a .nsys-rep report (LoadNsysRep);
//   - an SQLite export, by its file header or a .sqlite name (LoadSQLite);
//   - a .json measurements file or results JSON (LoadMeasurements);
//   - a folder of `nsys stats` CSV reports, or one report in it (LoadCSVDir);
//   - the program's stdout, told by its own lines (LoadTranscript);
//   - a folder: the best capture in it, in the order plain SQLite export,
//     nsyscheck's own SQLite export (*.nsyscheck.sqlite), .nsys-rep, CSV
//     reports, results JSON, transcript.
//
// Beside a trace (folder, or a file with the same base name) a results JSON
// (*.results.json, results.json) or else a transcript (*.transcript.txt,
// transcript.txt) supplies c.Program, and its path is added to c.Files. Such
// a sibling is a hint: one that is not the program's output (another
// program's stdout, a foreign JSON) is listed in c.SetAside with the reason,
// and the capture is read without it.
func Load(path string, opts Options) (*Capture, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, &inputerr.Error{Path: path, Problem: "cannot read the input", Err: err,
			Hint: "check the path: give a .nsys-rep, .sqlite, .json, transcript or a folder holding them"}
	}
	if st.IsDir() {
		return loadDir(path, opts)
	}
	if err := inputerr.Regular(path, st); err != nil {
		return nil, err
	}
	c, err := loadFile(path, opts)
	if err != nil {
		return nil, err
	}
	if c.Program == nil {
		dir := filepath.Dir(path)
		base := captureBase(filepath.Base(path))
		if err := attachProgram(c, dir, []string{
			base + ".results.json", base + ".transcript.txt",
		}); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// loadFile reads one file by the kind nsysdb.Detect tells from its first
// bytes and its name.
func loadFile(path string, opts Options) (*Capture, error) {
	kind, err := nsysdb.Detect(path)
	if err != nil {
		// The reader of the kind the name tells explains what is wrong.
		if kind = nsysdb.Sniff(path, nil); kind == nsysdb.KindUnknown {
			return nil, &inputerr.Error{Path: path, Problem: "cannot read the input", Err: err}
		}
	}
	switch kind {
	case nsysdb.KindQdstrm:
		return nil, errQdstrm(path)
	case nsysdb.KindNsysRep:
		return LoadNsysRep(path, opts)
	case nsysdb.KindSQLite:
		return LoadSQLite(path, opts)
	case nsysdb.KindJSON:
		return LoadMeasurements(path)
	case nsysdb.KindCSV:
		if _, _, ok := matchCSVReport(filepath.Base(path)); !ok {
			return nil, &inputerr.Error{Path: path, Problem: "not a known nsys stats report",
				Hint: "expected a file ending in " + csvSuffixes() + ", or the folder that holds them"}
		}
		return LoadCSVDir(filepath.Dir(path), opts)
	case nsysdb.KindTranscript:
		return LoadTranscript(path)
	}
	return nil, errUnrecognised(path)
}

// errUnrecognised is the one error for a file that is none of the inputs
// nsysdb.Sniff tells.
func errUnrecognised(path string) error {
	return &inputerr.Error{Path: path, Problem: "not an input nsyscheck reads: looked for " + nsysdb.Looked,
		Hint: "give one of those, or the folder that holds them"}
}

// errQdstrm explains a .qdstrm: the raw stream nsys writes while profiling,
// left behind when it could not turn the stream into a report.
func errQdstrm(path string) error {
	return &inputerr.Error{Path: path,
		Problem: "a raw Nsight Systems stream (.qdstrm), not a report: nsys stopped before converting it (the profiled program crashed, was killed, or the importer is missing)",
		Hint: "convert it with the QdstrmImporter that ships with Nsight Systems (QdstrmImporter -i FILE.qdstrm, in the host-linux-x64 folder of the install, " +
			"e.g. /opt/nvidia/nsight-systems/VERSION/host-linux-x64/QdstrmImporter) and give the .nsys-rep it writes, or profile again"}
}

// captureBase strips the known extensions from a file name: "ref.sqlite" ->
// "ref", "pinned.nsyscheck.sqlite" -> "pinned", "ref_cuda_api_sum.csv" -> "ref".
func captureBase(name string) string {
	if _, base, ok := matchCSVReport(name); ok {
		return base
	}
	for _, ext := range []string{".nsyscheck.sqlite", ".sqlite", ".nsys-rep", ".qdrep",
		".results.json", ".json", ".transcript.txt", ".txt"} {
		if strings.HasSuffix(strings.ToLower(name), ext) {
			return name[:len(name)-len(ext)]
		}
	}
	return strings.TrimSuffix(name, filepath.Ext(name))
}

// dirFiles are a folder's files by what they hold, as their names say.
type dirFiles struct {
	plainSQLite, ownSQLite, reps, results, transcripts []string
	hasCSV                                             bool
	streams                                            []string // raw .qdstrm streams
}

// classifyDir sorts a folder's files by kind.
func classifyDir(entries []os.DirEntry) dirFiles {
	var f dirFiles
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		n := e.Name()
		l := strings.ToLower(n)
		switch {
		case strings.HasSuffix(l, ExportSuffix):
			f.ownSQLite = append(f.ownSQLite, n)
		case strings.HasSuffix(l, ".sqlite"):
			f.plainSQLite = append(f.plainSQLite, n)
		case nsysdb.IsReportName(l):
			f.reps = append(f.reps, n)
		case l == "results.json", strings.HasSuffix(l, ".results.json"):
			f.results = append(f.results, n)
		case l == "transcript.txt", strings.HasSuffix(l, ".transcript.txt"):
			f.transcripts = append(f.transcripts, n)
		case strings.HasSuffix(l, ".csv"):
			if _, _, ok := matchCSVReport(n); ok {
				f.hasCSV = true
			}
		case nsysdb.IsStreamName(l):
			f.streams = append(f.streams, n)
		}
	}
	return f
}

// pickOne returns the path of the one file of a kind in dir, refusing more
// than one; loadDir and the audit's folder reading both pick with it.
func pickOne(dir, kind string, names []string) (string, error) {
	if len(names) > 1 {
		sort.Strings(names)
		return "", &inputerr.Error{Path: dir, Problem: "more than one " + kind + ": " + strings.Join(names, ", "),
			Hint: "give the file itself, or keep one capture per folder"}
	}
	return filepath.Join(dir, names[0]), nil
}

// loadDir picks the best capture in a folder.
func loadDir(dir string, opts Options) (*Capture, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, &inputerr.Error{Path: dir, Problem: "cannot list the folder", Err: err}
	}
	f := classifyDir(entries)
	plainSQLite, ownSQLite, reps, results, transcripts, hasCSV := f.plainSQLite, f.ownSQLite, f.reps, f.results, f.transcripts, f.hasCSV
	pick := func(kind string, names []string) (string, error) { return pickOne(dir, kind, names) }
	var c *Capture
	var file string
	switch {
	case len(plainSQLite) > 0:
		if file, err = pick("SQLite export", plainSQLite); err == nil {
			c, err = LoadSQLite(file, opts)
		}
	case len(ownSQLite) > 0:
		if file, err = pick("SQLite export", ownSQLite); err == nil {
			c, err = LoadSQLite(file, opts)
		}
	case len(reps) > 0:
		if file, err = pick(".nsys-rep report", reps); err == nil {
			c, err = LoadNsysRep(file, opts)
		}
	case hasCSV:
		c, err = LoadCSVDir(dir, opts)
	case len(results) > 0:
		if file, err = pick("results JSON", results); err == nil {
			c, err = LoadMeasurements(file)
		}
	case len(transcripts) > 0:
		if file, err = pick("transcript", transcripts); err == nil {
			c, err = LoadTranscript(file)
		}
	case len(f.streams) > 0:
		sort.Strings(f.streams)
		return nil, errQdstrm(filepath.Join(dir, f.streams[0]))
	default:
		return nil, &inputerr.Error{Path: dir, Problem: "no capture found in " + dir,
			Hint: "looked for *.sqlite, *.nsys-rep, nsys stats CSV reports (" + csvSuffixes() +
				"), *.results.json / results.json and *.transcript.txt / transcript.txt"}
	}
	if err != nil {
		return nil, err
	}
	if c.Program != nil {
		return c, nil
	}
	// Prefer the numbers of the same base name as the trace, then the only ones.
	var want []string
	if file != "" {
		base := captureBase(filepath.Base(file))
		want = append(want, base+".results.json", base+".transcript.txt")
	}
	if len(results) == 1 {
		want = append(want, results[0])
	}
	if len(transcripts) == 1 {
		want = append(want, transcripts[0])
	}
	want = append(want, "results.json", "transcript.txt")
	return c, attachProgram(c, dir, want)
}

// attachProgram loads the first of names that exists in dir and reads as
// the program's output as c.Program; the others that exist but do not read
// go to c.SetAside.
func attachProgram(c *Capture, dir string, names []string) error {
	for _, n := range names {
		p := filepath.Join(dir, n)
		st, err := os.Stat(p)
		if err != nil || st.IsDir() {
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				setAside(c, p, "cannot read it: "+err.Error())
			}
			continue
		}
		var pc *Capture
		if strings.HasSuffix(strings.ToLower(n), ".json") {
			pc, err = LoadMeasurements(p)
		} else {
			pc, err = LoadTranscript(p)
		}
		if err != nil {
			reason := err.Error()
			var ie *inputerr.Error
			if errors.As(err, &ie) && ie.Path == p {
				reason = ie.Problem
			}
			setAside(c, p, reason)
			continue
		}
		c.Program = pc.Program
		c.Files = append(c.Files, p)
		fillMetaFromProgram(c, pc.Program)
		dropGap(c, FactProgram)
		return nil
	}
	return nil
}

// setAside records a sibling file that was not used, once.
func setAside(c *Capture, path, reason string) {
	for _, s := range c.SetAside {
		if s.Path == path {
			return
		}
	}
	c.SetAside = append(c.SetAside, SetAside{Path: path, Reason: reason})
}

// dropGap removes a fact from c.Missing once another input supplied it.
func dropGap(c *Capture, f Fact) {
	out := c.Missing[:0]
	for _, g := range c.Missing {
		if g.Fact != f {
			out = append(out, g)
		}
	}
	c.Missing = out
}
