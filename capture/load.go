package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/ctlchar"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/limits"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/program"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/source"
)

// Load reads whatever path holds (source.Open tells it):
//
//   - a .nsys-rep report, read through its SQLite export, found or made as
//     exportcache.Resolve says (nsys in its own process group, stopped on
//     cancel; the report never modified);
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
	src, err := source.Open(opts.context(), path, opts.sourceOptions(nsysdb.KindUnknown))
	if err != nil {
		return nil, err
	}
	defer src.Close()
	return FromSource(opts.context(), src, opts)
}

// LoadSQLite reads an Nsight Systems SQLite export (nsys export --type
// sqlite) into a Capture. The file is opened read-only and never modified.
//
// Tables an export leaves out because they would be empty (memory copies,
// kernels, NVTX) are recorded as missing facts; a missing CUDA API trace or
// string table is an error. API summaries are not computed: they can be
// derived from Calls.
func LoadSQLite(path string, opts Options) (*Capture, error) {
	return loadAs(path, opts, nsysdb.KindSQLite)
}

// LoadCSVDir reads the `nsys stats --format csv` reports in dir: the API
// trace, the API, GPU-memory and NVTX summaries, and the per-record GPU
// trace (copies with bytes and memory kinds, kernels) and NVTX push/pop
// trace, under their current or their 2022-era report names. Reports are
// found by their "_<report>.csv" suffix whatever the base name; one base
// name per folder.
func LoadCSVDir(dir string, opts Options) (*Capture, error) {
	return loadAs(dir, opts, nsysdb.KindCSV)
}

// LoadTranscript reads the bundled program's stdout (possibly followed or
// interleaved by nsys's own lines) into c.Program.
func LoadTranscript(path string) (*Capture, error) {
	return loadAs(path, Options{}, nsysdb.KindTranscript)
}

// LoadMeasurements reads a measurements file or the program's results JSON.
func LoadMeasurements(path string) (*Capture, error) {
	return loadAs(path, Options{}, nsysdb.KindJSON)
}

// loadAs reads path as an input of the given kind, without siblings.
func loadAs(path string, opts Options, kind nsysdb.Kind) (*Capture, error) {
	src, err := source.Open(opts.context(), path, opts.sourceOptions(kind))
	if err != nil {
		return nil, err
	}
	defer src.Close()
	src.Siblings = nil
	return FromSource(opts.context(), src, opts)
}

// FromSource builds the capture of an opened source: a trace through Read
// (with the loader's filters, opts.APINames and opts.ProgramThread) into
// the model, with the program's numbers from the first of the source's
// siblings that holds them; or the program's own numbers through the
// program package. Memsets are read for the checks across records alone
// (the model holds none), so that verify refuses a damaged memset as the
// audit does.
func FromSource(ctx context.Context, src *source.Source, opts Options) (*Capture, error) {
	switch src.Kind {
	case nsysdb.KindJSON:
		return programCapture(src.Program.Path, src.Program.Reader(), FormatMeasurements, "measurements file", program.ParseMeasurements)
	case nsysdb.KindTranscript:
		return programCapture(src.Program.Path, src.Program.Reader(), FormatTranscript, "transcript", program.ParseTranscript)
	}
	c := &Capture{Path: src.Path, Format: formatOf(src.Kind), Notes: append([]string(nil), src.Notes...)}
	// The copies come joined to their calls (the model keeps them apart),
	// so that the check across records needs not keep the copy calls.
	h, keepCalls := collect(c)
	info, err := Read(ctx, src, records.Selection{APINames: opts.APINames, ProgramThread: opts.ProgramThread, JoinCalls: true,
		Ops: []records.OpKind{records.OpCopy, records.OpKernel, records.OpMemset}}, records.Tee(h, opts.Watch))
	if err != nil {
		return nil, err
	}
	if err := info.Miscounted(src); err != nil {
		return nil, err
	}
	keepCalls()
	c.Files, c.Sources, c.OtherThreads = info.Files, info.Sources, info.OtherThreads
	if c.Format == FormatCSV {
		c.Lack(records.FactProgram, "the CSV reports hold no program output; put the transcript or results JSON beside them")
	} else {
		c.Lack(records.FactProgram, "an Nsight Systems export holds no numbers printed by the program; give its transcript or results JSON as well")
	}
	c.Sort()
	if err := attachProgram(c, src.Siblings); err != nil {
		return nil, err
	}
	return c, nil
}

// formatOf names the format of an input of the kind source.Open told.
func formatOf(k nsysdb.Kind) Format {
	switch k {
	case nsysdb.KindNsysRep:
		return FormatNsysRep
	case nsysdb.KindSQLite:
		return FormatSQLite
	case nsysdb.KindCSV:
		return FormatCSV
	case nsysdb.KindTranscript:
		return FormatTranscript
	}
	return FormatMeasurements
}

// programCapture reads a file of the program's own numbers (a transcript
// or a measurements file, as kind names it) from r with parse, into a
// capture of the given format that lacks every trace fact.
func programCapture(path string, r io.Reader, format Format, kind string, parse func(io.Reader, string) (*program.Measurements, error)) (*Capture, error) {
	m, err := parse(inputerr.Bounded(r, program.MaxFile, path, "a "+kind), path)
	if err != nil {
		return nil, err
	}
	c := &Capture{Path: path, Format: format, Files: []string{path}, Program: m, ProgramFile: path}
	fillMetaFromProgram(c, m)
	programLacks(c, "a "+kind)
	if err := validate(c); err != nil {
		return nil, err
	}
	return c, nil
}

// programLacks records every trace fact that the program's own numbers (a
// transcript, a results JSON or a measurements file) cannot provide.
func programLacks(c *Capture, what string) {
	reason := what + " holds the program's timings, not an Nsight Systems trace"
	for _, f := range []records.Fact{records.FactAPITrace, records.FactAPISummary, records.FactMemcpy, records.FactMemcpyBytes, records.FactMemoryKinds,
		records.FactCorrelation, records.FactKernels, records.FactNVTX, records.FactNVTXSummary, records.FactProcessScope, records.FactMemSummary} {
		c.Lack(f, reason)
	}
}

// fillMetaFromProgram copies the machine description of m into c.Meta where
// c.Meta has none. A driver written as a bare integer (cudaDriverGetVersion,
// e.g. "13000") is the CUDA driver version; anything else ("580.173.02") is
// the driver release.
func fillMetaFromProgram(c *Capture, m *program.Measurements) {
	if c.Meta.GPU == "" {
		c.Meta.GPU = m.GPU
	}
	if m.Driver != "" {
		if _, err := strconv.Atoi(m.Driver); err == nil {
			if c.Meta.CUDADriver == "" {
				c.Meta.CUDADriver = m.Driver
			}
		} else if c.Meta.Driver == "" {
			c.Meta.Driver = m.Driver
		}
	}
	if c.Meta.PCIeGen == 0 {
		c.Meta.PCIeGen = m.PCIeGen
	}
	if c.Meta.PCIeWidth == 0 {
		c.Meta.PCIeWidth = m.PCIeWidth
	}
}

// attachProgram reads the first of the siblings that exists and reads as
// the program's output as c.Program; the others that exist but do not read
// go to c.SetAside. A sibling saved as UTF-16 or UTF-32 is the program's
// output in another encoding, not another file: it is refused
// (inputerr.NotUTF8), not set aside.
func attachProgram(c *Capture, siblings []string) error {
	for _, p := range siblings {
		st, err := os.Stat(p)
		if err != nil || st.IsDir() {
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				setAside(c, p, "cannot read it: "+err.Error())
			}
			continue
		}
		if e := headEncoding(p); e != nil {
			return inputerr.NotUTF8(p, e, "give the file as the program wrote it")
		}
		var pc *Capture
		if strings.HasSuffix(strings.ToLower(p), ".json") {
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
		if g := pc.Program.GPU; g != "" && c.Meta.GPU != "" && !slices.ContainsFunc(strings.Split(c.Meta.GPU, ", "), func(m string) bool { return limits.SameGPU(m, g) }) {
			// Numbers of a run on another GPU are another run's.
			setAside(c, p, fmt.Sprintf("it was run on %s, where the capture ran on %s", ctlchar.Line(g), ctlchar.Line(c.Meta.GPU)))
			continue
		}
		c.Program, c.ProgramFile = pc.Program, p
		c.Files = append(c.Files, p)
		fillMetaFromProgram(c, pc.Program)
		dropGap(c, records.FactProgram)
		return nil
	}
	return nil
}

// headEncoding is the encoding of the text file at path where its first
// bytes show it UTF-16 or UTF-32 (inputerr.TextEncoding), nil otherwise or
// where it cannot be read (its reading then says why).
func headEncoding(path string) *inputerr.EncodingError {
	f, _, err := inputerr.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	head := make([]byte, 64)
	n, _ := io.ReadFull(f, head)
	return inputerr.TextEncoding(head[:n])
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
func dropGap(c *Capture, f records.Fact) {
	out := c.Missing[:0]
	for _, g := range c.Missing {
		if g.Fact != f {
			out = append(out, g)
		}
	}
	c.Missing = out
}
