package privacy

import (
	"fmt"
	"github.com/nsyscheck/nsyscheck/diag"
	"sort"
	"strings"

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

// unusedLabel marks findings in unused space of a SQLite file.
const unusedLabel = "found in unused pages of the file"

// DiagnosticCode is the code of every privacy diagnostic.
const DiagnosticCode diag.Code = "capture-exposes"

// Diagnostics turns the findings into warnings: one per secret, one per
// group of other findings, and one for everything found only in unused
// space of the file. Values are masked.
func (r *Report) Diagnostics() []diag.Diagnostic {
	if r == nil || len(r.Findings) == 0 {
		return nil
	}
	var out []diag.Diagnostic
	warn := func(format string, args ...any) {
		out = append(out, diag.Diagnostic{Level: diag.Warning,
			Detail: diag.Note{Of: DiagnosticCode, Text: r.Path + ": " + fmt.Sprintf(format, args...)}})
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
			warn("%s %s=%s in %s looks like a credential; do not share this capture as it is (nsyscheck scrub writes a copy without it)",
				f.Kind, f.label(), f.Masked, f.Where)
		}
	}
	byWhere := map[string][]Finding{}
	for _, f := range live {
		if f.Kind == KindEnv || f.Kind == KindWorkingDir {
			where := f.Where
			if strings.HasPrefix(where, "raw bytes") {
				where = "the raw bytes of the file"
			}
			byWhere[where] = append(byWhere[where], f)
		}
	}
	for _, where := range sortedKeys(byWhere) {
		fs := byWhere[where]
		warn("%d environment variable(s) outside the allowlist recorded in %s: %s",
			len(fs), where, listNames(fs, 12, true))
	}
	var procs []Finding
	for _, f := range live {
		if f.Kind == KindProcess {
			procs = append(procs, f)
		}
	}
	if len(procs) > 0 {
		warn("%d process(es) other than the profiled program and nsys recorded in "+nsysdb.TableProcesses+" (a snapshot of the machine): %s",
			len(procs), listNames(procs, 10, false))
	}
	if len(unused) > 0 {
		var secrets []Finding
		for _, f := range unused {
			if f.Kind == KindSecret {
				secrets = append(secrets, f)
			}
		}
		msg := fmt.Sprintf("%s (stale bytes no query shows, readable by anyone with the file): %d string(s)", unusedLabel, len(unused))
		if len(secrets) > 0 {
			msg += fmt.Sprintf(", %d of them credential-like: %s", len(secrets), listNames(secrets, 8, true))
		}
		others := len(unused) - len(secrets)
		if others > 0 {
			var rest []Finding
			for _, f := range unused {
				if f.Kind != KindSecret {
					rest = append(rest, f)
				}
			}
			msg += fmt.Sprintf("; environment: %s", listNames(rest, 8, false))
		}
		warn("%s", msg)
	}
	return out
}

// label names a finding: its name, or what kind of bare value it is.
func (f Finding) label() string {
	switch {
	case f.Name != "":
		return f.Name
	case len(URLCredentials(f.value)) > 0:
		return "(url)"
	}
	return "(token)"
}

func listNames(fs []Finding, limit int, withValues bool) string {
	var parts []string
	for i, f := range fs {
		if i == limit {
			parts = append(parts, fmt.Sprintf("and %d more", len(fs)-limit))
			break
		}
		s := f.label()
		if withValues && f.Masked != "" {
			s += "=" + f.Masked
		}
		switch {
		case f.Kind == KindProcess:
			s += " (" + f.Where + ")"
		case strings.HasPrefix(f.Where, "raw bytes"):
			s += fmt.Sprintf(" at offset %d", f.Offset)
			if f.More > 0 {
				s += fmt.Sprintf(" (+%d more)", f.More)
			}
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
