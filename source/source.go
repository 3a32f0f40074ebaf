// Package source turns an argument of the command line (a file or a
// folder) into the input it stands for, once: what kind of input it is, the
// files to read, the program's own output beside a trace, and the open
// handles the readers, the privacy scan and NVIDIA's rule use. A .nsys-rep
// is resolved to its SQLite export here (exportcache). Nothing after Open
// tells an input's kind again or opens the input by its path: a capture
// file is opened once, and an SQLite export's committed state once.
package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nsyscheck/nsyscheck/exportcache"
	"github.com/nsyscheck/nsyscheck/internal/environ"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/internal/regular"
	"github.com/nsyscheck/nsyscheck/internal/sqlitefile"
)

// Options tune how an input is opened.
type Options struct {
	// Nsys is the nsys executable that exports a .nsys-rep; empty means
	// look it up ($NSYS, PATH, the usual install folders).
	Nsys string
	// CacheDir, when set, receives .nsys-rep exports instead of the folder
	// beside the report.
	CacheDir string
	// Env is the environment NSYS, PATH and the user's cache folder are
	// read from (nil: the process's).
	Env environ.Env
	// Kind, when set, is the kind the input is read as instead of the one
	// its content and name tell: nsysdb.KindSQLite, KindNsysRep, KindCSV (a
	// folder of reports), KindJSON or KindTranscript.
	Kind nsysdb.Kind
}

// Source is one input, opened.
type Source struct {
	// Path is the input read: the argument as given, or the file Open
	// chose in a folder (the folder itself for CSV reports).
	Path string
	// Kind is what it holds: nsysdb.KindNsysRep (read through Export),
	// KindSQLite, KindCSV (a folder of nsys stats reports), KindJSON (a
	// results JSON or measurements file) or KindTranscript.
	Kind nsysdb.Kind
	// Report is the .nsys-rep (KindNsysRep), nil otherwise.
	Report *File
	// Export is the SQLite export to read: the input itself (KindSQLite) or
	// the report's export (KindNsysRep); nil otherwise.
	Export *File
	// Program is the transcript or JSON file (KindTranscript, KindJSON).
	Program *File
	// Dir is the folder of CSV reports (KindCSV), and Reports the known
	// reports in it by report key (nsysdb.ReportAPITrace, ...), full paths.
	Dir     string
	Reports map[string]string
	// Siblings are the files beside a trace that may hold the program's own
	// numbers (a results JSON, a transcript), in the order to try them;
	// they are hints, and need not exist.
	Siblings []string
	// Notes say what Open chose on the user's behalf, e.g. reading the
	// SQLite export beside a report that nsys could not export.
	Notes []string
}

// File is one capture file Open opened, with its open handle and, for an
// SQLite export, the database's committed state.
type File struct {
	Path    string
	Kind    nsysdb.Kind // KindSQLite, KindNsysRep, KindJSON or KindTranscript
	Size    int64
	ModTime time.Time
	// Own marks nsyscheck's own export of a report, which holds nothing
	// the report does not.
	Own bool
	// DB is the SQLite export's committed state (KindSQLite), nil
	// otherwise: the connections every reader of its tables shares.
	DB *sqlitefile.DB

	f       *os.File
	cleanup func()
}

// ReadAt reads the file's bytes from the handle Open holds.
func (f *File) ReadAt(p []byte, off int64) (int, error) { return f.f.ReadAt(p, off) }

// Reader reads the file from its start, through the handle Open holds.
func (f *File) Reader() io.Reader { return io.NewSectionReader(f.f, 0, f.Size) }

// Close closes the database and the file and removes any private copy.
func (f *File) Close() error {
	if f == nil {
		return nil
	}
	if f.DB != nil {
		f.DB.Close()
		f.DB = nil
	}
	if f.cleanup != nil {
		f.cleanup()
		f.cleanup = nil
	}
	if f.f != nil {
		err := f.f.Close()
		f.f = nil
		return err
	}
	return nil
}

// Close closes every file the source holds open.
func (s *Source) Close() error {
	if s == nil {
		return nil
	}
	var first error
	for _, f := range []*File{s.Program, s.Export, s.Report} {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Files are the capture files the source holds open, in the order they
// were given: the report before its export.
func (s *Source) Files() []*File {
	var out []*File
	for _, f := range []*File{s.Report, s.Export, s.Program} {
		if f != nil {
			out = append(out, f)
		}
	}
	return out
}

// Open opens the input at path (see Source): a file by what its first bytes
// and its name tell (nsysdb.Sniff), a folder by the best capture in it, in
// the order plain SQLite export, nsyscheck's own SQLite export
// (*.nsyscheck.sqlite), .nsys-rep, CSV reports, results JSON, transcript.
// A .nsys-rep is resolved to its SQLite export (exportcache); nsys, when it
// has to export, is stopped when ctx is cancelled. Close the source once
// done. Errors are *inputerr.Error.
func Open(ctx context.Context, path string, opts Options) (s *Source, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, &inputerr.Error{Path: path, Problem: "cannot read the input", Err: err,
			Hint: "check the path: give a .nsys-rep, .sqlite, .json, transcript or a folder holding them"}
	}
	defer func() {
		if err != nil {
			s.Close()
			s = nil
		}
	}()
	switch {
	case opts.Kind == nsysdb.KindCSV:
		return openCSV(path)
	case st.IsDir() && opts.Kind == nsysdb.KindUnknown:
		return openDir(ctx, path, opts)
	}
	if opts.Kind == nsysdb.KindNsysRep && st.IsDir() {
		return nil, &inputerr.Error{Path: path, Problem: "is a folder, not an Nsight Systems report", Hint: "give the .nsys-rep file itself"}
	}
	if opts.Kind == nsysdb.KindSQLite && st.IsDir() {
		return nil, &inputerr.Error{Path: path, Problem: "is a folder, not an Nsight Systems SQLite export", Hint: "give the .sqlite file itself"}
	}
	if err := inputerr.Regular(path, st); err != nil {
		return nil, err
	}
	s, err = openFile(ctx, path, opts)
	if err != nil {
		return s, err
	}
	if s.Kind != nsysdb.KindJSON && s.Kind != nsysdb.KindTranscript {
		base := baseName(filepath.Base(path))
		dir := filepath.Dir(path)
		s.Siblings = []string{filepath.Join(dir, base+".results.json"), filepath.Join(dir, base+".transcript.txt")}
	}
	return s, nil
}

// openFile opens one file by the kind it holds.
func openFile(ctx context.Context, path string, opts Options) (*Source, error) {
	f, info, err := regular.Open(path)
	if err != nil {
		return nil, inputErr(path, err)
	}
	head := make([]byte, nsysdb.SniffSize)
	n, err := f.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		f.Close()
		return nil, &inputerr.Error{Path: path, Problem: "cannot read the input", Err: err}
	}
	head = head[:n]
	file := &File{Path: path, Size: info.Size(), ModTime: info.ModTime(), f: f}
	kind, magic := kindOf(path, head)
	if opts.Kind != nsysdb.KindUnknown {
		kind = opts.Kind
	}
	s := &Source{Path: path, Kind: kind}
	switch kind {
	case nsysdb.KindQdstrm:
		file.Close()
		return nil, errQdstrm(path)
	case nsysdb.KindNsysRep:
		if magic == nsysdb.KindSQLite {
			// Already an SQLite export, only named like a report.
			s.Kind = nsysdb.KindSQLite
			s.Export = file
			return s, openDB(file)
		}
		s.Report = file
		file.Kind = nsysdb.KindNsysRep
		return s, s.resolve(ctx, head, magic, opts)
	case nsysdb.KindSQLite:
		s.Export = file
		return s, openDB(file)
	case nsysdb.KindJSON, nsysdb.KindTranscript:
		// Told by its name alone: one saved as UTF-16 may be any of the
		// JSON files nsyscheck reads (its own outputs among them).
		if e := inputerr.TextEncoding(head); e != nil && kind == nsysdb.KindJSON {
			file.Close()
			return nil, inputerr.NotUTF8(path, e, "give the file as the program or nsyscheck wrote it")
		}
		if out := ownOutputOf(head); kind == nsysdb.KindJSON && out != nil {
			file.Close()
			return nil, &inputerr.Error{Path: path, Problem: "nsyscheck " + out.Kind + "'s own JSON output, not a capture",
				Hint: "give the capture it was made from"}
		}
		file.Kind = kind
		s.Program = file
		return s, nil
	case nsysdb.KindCSV:
		file.Close()
		if _, _, ok := nsysdb.MatchReport(filepath.Base(path)); !ok {
			return nil, &inputerr.Error{Path: path, Problem: "not a known nsys stats report",
				Hint: "expected a file ending in " + nsysdb.ReportSuffixes() + ", or the folder that holds them"}
		}
		return openCSV(filepath.Dir(path))
	}
	file.Close()
	if e := inputerr.TextEncoding(head); e != nil {
		return nil, inputerr.NotUTF8(path, e, "give the file as nsys or the program wrote it")
	}
	return nil, errUnrecognised(path)
}

// kindOf tells a file's kind, the one place an input is told: by its first
// bytes and its name (nsysdb.Sniff, what Open reads it as), and by its first
// bytes alone (nsysdb.Magic: an SQLite database or a report whatever the
// name says). A JSON file that is one of nsyscheck's own outputs is told
// apart from the program's by its envelope's start (ownOutputOf, for Open
// and OwnOutput).
func kindOf(path string, head []byte) (sniffed, magic nsysdb.Kind) {
	return nsysdb.Sniff(path, head), nsysdb.Magic(head)
}

// inputErr turns an error of regular.Open into an *inputerr.Error.
func inputErr(path string, err error) error {
	var nr *regular.NotRegularError
	switch {
	case errors.As(err, &nr):
		return &inputerr.Error{Path: path, Problem: nr.What, Hint: "copy the data into a regular file and give that"}
	case errors.Is(err, os.ErrNotExist):
		return &inputerr.Error{Path: path, Problem: "no such file", Hint: "check the path"}
	}
	return &inputerr.Error{Path: path, Problem: "cannot open the file", Err: inputerr.UnwrapPath(err)}
}

// openDB checks an SQLite export's header on its open file and opens its
// committed state as f.DB.
func openDB(f *File) error {
	f.Kind = nsysdb.KindSQLite
	if err := sqlitefile.Check(f.Path, f.f, f.Size); err != nil {
		return err
	}
	db, cleanup, err := sqlitefile.Open(f.Path, f.f)
	if err != nil {
		cleanup()
		return err
	}
	f.DB, f.cleanup = db, cleanup
	return nil
}

// resolve finds or makes the SQLite export of the report s.Report
// (exportcache.Resolve) and opens it as s.Export.
func (s *Source) resolve(ctx context.Context, head []byte, magic nsysdb.Kind, opts Options) error {
	rep := s.Report
	switch {
	case rep.Size == 0:
		return &inputerr.Error{Path: rep.Path, Problem: "the file is empty, not an Nsight Systems report",
			Hint: "profile again: nsys profile -t cuda,nvtx -o NAME ./program"}
	case len(strings.Trim(string(head[:min(len(head), 64)]), "\x00")) == 0:
		return &inputerr.Error{Path: rep.Path, Problem: "the file holds only zero bytes, not an Nsight Systems report (an interrupted copy?)",
			Hint: "copy the report again, or profile again: nsys profile -t cuda,nvtx -o NAME ./program"}
	}
	info, err := rep.f.Stat()
	if err != nil {
		return &inputerr.Error{Path: rep.Path, Problem: "cannot read the report", Err: err}
	}
	var export *File
	accept := func(db string, check func(*sqlitefile.DB) error) error {
		f, err := OpenFile(db)
		if err != nil {
			return err
		}
		if f.Kind != nsysdb.KindSQLite {
			f.Close()
			return sqlitefile.CheckPath(db)
		}
		if check != nil {
			if err := check(f.DB); err != nil {
				f.Close()
				return err
			}
		}
		export.Close() // a candidate taken before
		export = f
		return nil
	}
	db, own, note, err := exportcache.Resolve(ctx, exportcache.Report{Path: rep.Path, File: rep.f, Info: info,
		Magic: magic == nsysdb.KindNsysRep}, exportcache.Options{Nsys: opts.Nsys, CacheDir: opts.CacheDir, Env: opts.Env}, accept)
	if err != nil {
		export.Close()
		return err
	}
	export.Path, export.Own = db, own
	s.Export = export
	if note != "" {
		s.Notes = append(s.Notes, note)
	}
	return nil
}

// OpenFile opens one capture file as it is, for what reads its bytes or its
// tables rather than its records (the privacy scan, the shareable copy,
// the candidate exports of a report): an SQLite database, by its first
// bytes, with its committed state open as DB; a .nsys-rep, by its first
// bytes or its name, never exported; anything else as KindUnknown. Close
// the file once done.
func OpenFile(path string) (*File, error) {
	f, info, err := regular.Open(path)
	if err != nil {
		return nil, inputErr(path, err)
	}
	head := make([]byte, nsysdb.HeadSize)
	n, err := f.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		f.Close()
		return nil, &inputerr.Error{Path: path, Problem: "cannot read the capture", Err: err}
	}
	file := &File{Path: path, Size: info.Size(), ModTime: info.ModTime(), f: f}
	_, file.Kind = kindOf(path, head[:n])
	if file.Kind == nsysdb.KindUnknown && nsysdb.IsReportName(path) {
		file.Kind = nsysdb.KindNsysRep
	}
	if file.Kind == nsysdb.KindSQLite {
		if err := openDB(file); err != nil {
			file.Close()
			return nil, err
		}
	}
	return file, nil
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

// baseName strips the known extensions from a capture file's name:
// "ref.sqlite" -> "ref", "pinned.nsyscheck.sqlite" -> "pinned",
// "ref_cuda_api_sum.csv" -> "ref".
func baseName(name string) string {
	if _, base, ok := nsysdb.MatchReport(name); ok {
		return base
	}
	for _, ext := range []string{exportcache.Suffix, ".sqlite", ".nsys-rep", ".qdrep",
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

// nameKind is what a file's name alone says it holds: nameReport,
// nameOwnSQLite and nameSQLite in the order a folder prefers them
// (onePerBase ranks by it).
type nameKind int

const (
	nameOther nameKind = iota
	nameReport
	nameOwnSQLite
	nameSQLite
	nameResults
	nameTranscript
	nameCSVReport
	nameStream
)

// kindByName tells a file by its name alone, the one place source does
// (a folder's listing, the captures of one job): kindOf tells a file
// Open reads by its content.
func kindByName(name string) nameKind {
	l := strings.ToLower(name)
	switch {
	case strings.HasSuffix(l, exportcache.Suffix):
		return nameOwnSQLite
	case strings.HasSuffix(l, ".sqlite"):
		return nameSQLite
	case nsysdb.IsReportName(l):
		return nameReport
	case l == "results.json", strings.HasSuffix(l, ".results.json"):
		return nameResults
	case l == "transcript.txt", strings.HasSuffix(l, ".transcript.txt"):
		return nameTranscript
	case strings.HasSuffix(l, ".csv"):
		if _, _, ok := nsysdb.MatchReport(name); ok {
			return nameCSVReport
		}
	case nsysdb.IsStreamName(l):
		return nameStream
	}
	return nameOther
}

// classifyDir sorts a folder's files by kind.
func classifyDir(entries []os.DirEntry) dirFiles {
	var f dirFiles
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		n := e.Name()
		switch kindByName(n) {
		case nameOwnSQLite:
			f.ownSQLite = append(f.ownSQLite, n)
		case nameSQLite:
			f.plainSQLite = append(f.plainSQLite, n)
		case nameReport:
			f.reps = append(f.reps, n)
		case nameResults:
			f.results = append(f.results, n)
		case nameTranscript:
			f.transcripts = append(f.transcripts, n)
		case nameCSVReport:
			f.hasCSV = true
		case nameStream:
			f.streams = append(f.streams, n)
		}
	}
	return f
}

// pickOne returns the path of the one file of a kind in dir, refusing more
// than one.
func pickOne(dir, kind string, names []string) (string, error) {
	if len(names) > 1 {
		sort.Strings(names)
		return "", &inputerr.Error{Path: dir, Problem: "more than one " + kind + ": " + strings.Join(names, ", "),
			Hint: "give the file itself, or keep one capture per folder"}
	}
	return filepath.Join(dir, names[0]), nil
}

// openDir opens the best capture in a folder; the program's numbers of the
// same base name as the trace, then the only ones, are its siblings.
func openDir(ctx context.Context, dir string, opts Options) (*Source, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, &inputerr.Error{Path: dir, Problem: "cannot list the folder", Err: err}
	}
	f := classifyDir(entries)
	var s *Source
	file := ""
	open := func(kind nsysdb.Kind, what string, names []string) error {
		if file, err = pickOne(dir, what, names); err != nil {
			return err
		}
		o := opts
		o.Kind = kind
		s, err = openFile(ctx, file, o)
		return err
	}
	switch {
	case len(f.plainSQLite) > 0:
		err = open(nsysdb.KindSQLite, "SQLite export", f.plainSQLite)
	case len(f.ownSQLite) > 0:
		err = open(nsysdb.KindSQLite, "SQLite export", f.ownSQLite)
	case len(f.reps) > 0:
		err = open(nsysdb.KindNsysRep, ".nsys-rep report", f.reps)
	case f.hasCSV:
		s, err = openCSV(dir)
	case len(f.results) > 0:
		err = open(nsysdb.KindJSON, "results JSON", f.results)
	case len(f.transcripts) > 0:
		err = open(nsysdb.KindTranscript, "transcript", f.transcripts)
	case len(f.streams) > 0:
		sort.Strings(f.streams)
		return nil, errQdstrm(filepath.Join(dir, f.streams[0]))
	default:
		if subs := captureFolders(dir, entries); len(subs) > 0 {
			verb := "do"
			if len(subs) == 1 {
				verb = "does"
			}
			return nil, &inputerr.Error{Path: dir, Problem: fmt.Sprintf("holds no capture itself, but %s in it %s: %s",
				plural(len(subs), "folder"), verb, strings.Join(subs, ", ")),
				Hint: "give one or several of them, as in " + filepath.Join(dir, subs[0])}
		}
		return nil, &inputerr.Error{Path: dir, Problem: "no capture found in " + dir,
			Hint: "looked for *.sqlite, *.nsys-rep, nsys stats CSV reports (" + nsysdb.ReportSuffixes() +
				"), *.results.json / results.json and *.transcript.txt / transcript.txt"}
	}
	if err != nil {
		return s, err
	}
	if s.Kind == nsysdb.KindJSON || s.Kind == nsysdb.KindTranscript {
		return s, nil
	}
	// Prefer the numbers of the same base name as the trace, then the only ones.
	var want []string
	if file != "" {
		base := baseName(filepath.Base(file))
		want = append(want, base+".results.json", base+".transcript.txt")
	}
	if len(f.results) == 1 {
		want = append(want, f.results[0])
	}
	if len(f.transcripts) == 1 {
		want = append(want, f.transcripts[0])
	}
	want = append(want, "results.json", "transcript.txt")
	for _, n := range want {
		s.Siblings = append(s.Siblings, filepath.Join(dir, n))
	}
	return s, nil
}

// captureFolders names, sorted, the folders directly in dir that hold a
// capture of a kind openDir reads; a folder that cannot be listed is left
// out.
func captureFolders(dir string, entries []os.DirEntry) []string {
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub, err := os.ReadDir(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		f := classifyDir(sub)
		if len(f.plainSQLite)+len(f.ownSQLite)+len(f.reps)+len(f.results)+len(f.transcripts) > 0 || f.hasCSV {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// plural is n and noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// openCSV lists the known nsys stats reports in dir (findReports).
func openCSV(dir string) (*Source, error) {
	found, err := findReports(dir)
	if err != nil {
		return nil, err
	}
	s := &Source{Path: dir, Kind: nsysdb.KindCSV, Dir: dir, Reports: map[string]string{}}
	for key, files := range found {
		s.Reports[key] = filepath.Join(dir, files[0])
	}
	return s, nil
}

// findReports lists the known reports in dir by key, refusing a folder with
// none, with several captures' reports, or with a report twice.
func findReports(dir string) (map[string][]string, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, &inputerr.Error{Path: dir, Problem: "cannot read the CSV folder", Err: err, Hint: "check the path"}
	}
	if !st.IsDir() {
		return nil, &inputerr.Error{Path: dir, Problem: "not a folder", Hint: "give the folder that holds the nsys stats CSV reports"}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, &inputerr.Error{Path: dir, Problem: "cannot list the CSV folder", Err: err}
	}
	found := map[string][]string{} // report key -> file names
	bases := map[string]bool{}
	var otherCSV []string
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		key, base, ok := nsysdb.MatchReport(e.Name())
		if !ok {
			if strings.HasSuffix(strings.ToLower(e.Name()), ".csv") {
				otherCSV = append(otherCSV, e.Name())
			}
			continue
		}
		found[key] = append(found[key], e.Name())
		bases[base] = true
	}
	if len(found) == 0 {
		problem := "no CSV files"
		if len(otherCSV) > 0 {
			problem = "no known nsys stats report among the CSV files " + strings.Join(otherCSV, ", ")
		}
		return nil, &inputerr.Error{Path: dir, Problem: problem,
			Hint: "expected files ending in " + nsysdb.ReportSuffixes() +
				"; make them with nsys stats --report cuda_api_trace,cuda_api_sum,cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum,nvtx_sum,cuda_gpu_trace,nvtx_pushpop_trace --format csv --output BASE REPORT.nsys-rep"}
	}
	if len(bases) > 1 {
		var names []string
		for _, files := range found {
			names = append(names, files...)
		}
		sort.Strings(names)
		return nil, &inputerr.Error{Path: dir, Problem: "reports of several captures in one folder: " + strings.Join(names, ", "),
			Hint: "keep one capture's reports (one base name) per folder"}
	}
	for key, files := range found {
		if len(files) > 1 {
			sort.Strings(files)
			return nil, &inputerr.Error{Path: dir, Problem: "report " + key + " is there more than once: " + strings.Join(files, ", "),
				Hint: "keep one generation of the reports per folder"}
		}
	}
	return found, nil
}
