package privacy

import (
	"sort"
	"strings"

	"github.com/nsyscheck/nsyscheck/diag"

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

// Kind says what a finding exposes.
type Kind string

// Finding kinds.
const (
	// KindEnv is an environment variable outside the allowlist recorded for
	// the profiled process (or, in a StringIds block, for some process).
	KindEnv Kind = "environment"
	// KindSecret is a variable or string whose name or value looks like a
	// credential, wherever it was found.
	KindSecret Kind = "secret"
	// KindProcess is a process other than the profiled program and nsys's
	// own, from the machine-wide process snapshot.
	KindProcess Kind = "process"
	// KindWorkingDir is the working folder (PWD, OLDPWD, or a recorded
	// working directory under a user's home).
	KindWorkingDir Kind = "working-folder"
	// KindCommand is a command line holding something that looks like a
	// credential.
	KindCommand Kind = "command-line"
)

// Finding is one thing a capture exposes.
type Finding struct {
	Kind Kind   `json:"kind"`
	Name string `json:"name"` // variable name, process name, or "" for a bare URL credential
	// Where is the table and row ("TARGET_INFO_SYSTEM_ENV row DeviceEnvironment")
	// or "raw bytes at offset N".
	Where string `json:"where"`
	// Masked is the value as it may be shown: see Mask. Never the full value.
	Masked string `json:"masked,omitempty"`
	// Unused is true when the bytes lie in unused pages or unused space of
	// the file: no query shows them, but anyone with the file can read them.
	Unused bool `json:"unused,omitempty"`
	// Offset is the file offset of a raw-byte hit (the first, when More > 0).
	Offset int64 `json:"offset,omitempty"`
	// More is how many further raw-byte hits hold the same name and value
	// in the same kind of space (live or unused); 0 for one place.
	More int `json:"more,omitempty"`

	value string // the full value, kept for Scrub; never printed
	// lines are the rest of a private key whose BEGIN line is value, each
	// a string after it in the same column (keyTail), kept for Scrub.
	lines []string
	// process is a process finding's globalPid >> 24 (host and pid), set
	// (hasProcess) where two processes of the capture share its pid.
	process    int64
	hasProcess bool
	format     string // the credential's format (FormatGitHub, ...), where FindSecrets told it
}

// Report is what Scan found in one file.
type Report struct {
	Path   string `json:"path"`
	Format string `json:"format"` // "sqlite" or "nsys-rep"
	// ProfiledPIDs are the processes that made CUDA runtime calls.
	ProfiledPIDs []int64   `json:"profiledPids,omitempty"`
	Findings     []Finding `json:"findings,omitempty"`
	// UnusedBytes is the size of the unused space of a SQLite file, where
	// stale bytes can survive; 0 for a .nsys-rep.
	UnusedBytes int64 `json:"unusedBytes,omitempty"`
	// Notes say what the scan could not do (e.g. a file whose pages could
	// not be parsed, so raw hits could not be classified).
	Notes []string `json:"notes,omitempty"`
}

// Clean reports whether nothing was found.
func (r *Report) Clean() bool { return len(r.Findings) == 0 }

// Count returns how many findings of kind k there are, unused ones included.
func (r *Report) Count(k Kind) int {
	n := 0
	for _, f := range r.Findings {
		if f.Kind == k {
			n++
		}
	}
	return n
}

// DiagnosticCode is the code of every privacy diagnostic.
const DiagnosticCode diag.Code = "capture-exposes"

// ExposureKind says what a capture-exposes warning is about.
type ExposureKind int

// Kinds of exposure.
const (
	// ExposesCredential: one live string that looks like a credential.
	ExposesCredential ExposureKind = iota + 1
	// ExposesEnvironment: live environment variables outside the
	// allowlist, recorded in one place.
	ExposesEnvironment
	// ExposesProcesses: other processes in the machine's process snapshot.
	ExposesProcesses
	// ExposesUnused: strings found only in unused space of the file.
	ExposesUnused
)

// Exposure is the detail of one capture-exposes warning: what File
// exposes, of which kind, recorded Where (for environment variables), and
// the findings, their values masked.
type Exposure struct {
	File     string
	Kind     ExposureKind
	Where    string
	Findings []Finding
}

// Code is the exposure's diagnostic code.
func (Exposure) Code() diag.Code { return DiagnosticCode }

// MapPaths passes the file's path through f.
func (e Exposure) MapPaths(f func(string) string) diag.Detail { e.File = f(e.File); return e }

// Diagnostics turns the findings into warnings: one per credential, one
// per place other variables are recorded, one for the other processes and
// one for everything found only in unused space of the file.
func (r *Report) Diagnostics() []diag.Diagnostic {
	if r == nil || len(r.Findings) == 0 {
		return nil
	}
	var out []diag.Diagnostic
	warn := func(e Exposure) {
		e.File = r.Path
		out = append(out, diag.Diagnostic{Level: diag.Warning, Detail: e})
	}
	var live, unused []Finding
	for _, f := range r.Findings {
		if f.Unused {
			unused = append(unused, f)
		} else {
			live = append(live, f)
		}
	}
	for _, f := range live {
		if f.Kind == KindSecret || f.Kind == KindCommand {
			warn(Exposure{Kind: ExposesCredential, Findings: []Finding{f}})
		}
	}
	byWhere := map[string][]Finding{}
	for _, f := range live {
		if f.Kind == KindEnv || f.Kind == KindWorkingDir {
			where := f.Where
			if f.InRawBytes() {
				where = RawBytes
			}
			byWhere[where] = append(byWhere[where], f)
		}
	}
	for _, where := range sortedKeys(byWhere) {
		warn(Exposure{Kind: ExposesEnvironment, Where: where, Findings: byWhere[where]})
	}
	var procs []Finding
	for _, f := range live {
		if f.Kind == KindProcess {
			procs = append(procs, f)
		}
	}
	if len(procs) > 0 {
		warn(Exposure{Kind: ExposesProcesses, Where: nsysdb.TableProcesses, Findings: procs})
	}
	if len(unused) > 0 {
		warn(Exposure{Kind: ExposesUnused, Findings: unused})
	}
	return out
}

// UnusedPages marks findings in unused space of a SQLite file.
const UnusedPages = "found in unused pages of the file"

// RawBytes is where a finding in the file's bytes outside any table is
// recorded.
const RawBytes = "the raw bytes of the file"

// InRawBytes reports whether the finding lies in the file's bytes outside
// any table (a raw hit at Offset).
func (f Finding) InRawBytes() bool { return strings.HasPrefix(f.Where, "raw bytes") }

// Label names a finding: its name, or what kind of bare value it is
// ("(url)", "(GitHub token)", "(private key)"; "(token)" for one that is
// no longer whole).
func (f Finding) Label() string {
	switch {
	case f.Name != "":
		return f.Name
	case len(URLCredentials(f.value)) > 0:
		return "(url)"
	}
	format := f.format
	if found := FindSecrets(f.value); format == "" && len(found) == 1 && found[0].Value == f.value {
		format = found[0].Format // a raw-byte hit: the token alone
	}
	if format != "" && format != FormatNamed && format != FormatURL {
		return "(" + format + ")"
	}
	return "(token)"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
