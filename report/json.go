package report

import (
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/auditjson"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/predictions"
	"github.com/nsyscheck/nsyscheck/privacy"
	"github.com/nsyscheck/nsyscheck/ranks"
	"github.com/nsyscheck/nsyscheck/source"
)

// SchemaVersion is the version of the JSON output's shape, described by
// docs/output.schema.json. It changes when a field is renamed, removed or
// changes meaning; new optional fields do not change it.
const SchemaVersion = 1

// Kinds of JSON output, the envelope's "kind".
const (
	KindVerify = source.OutputVerify
	KindAudit  = audit.EnvelopeKind
)

// Envelope is the one top-level object of every JSON output, for one input
// or many: its schema version, what kind of output it is, the tool that
// wrote it, the inputs in the order given, one result per input in the
// same order (verify's verdicts, or an audit), and the fleet table or the
// audit's check where there is one. Results' shape depends on Kind.
type Envelope struct {
	SchemaVersion int    `json:"schemaVersion"`
	Kind          string `json:"kind"`
	Tool          Tool   `json:"tool"`
	// Inputs are the inputs as the results name them.
	Inputs  []string `json:"inputs"`
	Results any      `json:"results"`
	// Fleet is the fleet table when the inputs include run folders of
	// two or more GPUs (verify, report) or come from run --gpu all: each
	// GPU's pinned bandwidth against its rated link and its peers, and the
	// outliers found. Absent otherwise.
	Fleet *JSONFleet `json:"fleet,omitempty"`
	// Check is the audit's check of the capture after the fix against the
	// capture before it (kind "audit" with two inputs). Absent otherwise.
	Check *auditjson.Check `json:"check,omitempty"`
	// Refused is the audit's refusal of an input (kind "audit", no
	// results). Absent otherwise.
	Refused *JSONRefusal `json:"refused,omitempty"`
	// Ranks is the table of a job's ranks (kind "audit-ranks"): a row per
	// rank, and the ranks that stand out against their peers. Absent
	// otherwise.
	Ranks *ranks.Summary `json:"ranks,omitempty"`
}

// JSONRefusal is an audit's refusal of an input: which, why, what to do,
// and what the capture said of itself before it.
type JSONRefusal struct {
	Input string `json:"input"`
	// Code is RefusedUnavailable when the input holds no answer (no copy
	// records, copy calls without them, copies without calls), else
	// RefusedUnreadable.
	Code        string           `json:"code"`
	Where       string           `json:"where,omitempty"`
	Reason      string           `json:"reason"`
	Hint        string           `json:"hint,omitempty"`
	Diagnostics []jsonDiagnostic `json:"diagnostics"`
}

// Codes of a JSONRefusal.
const (
	RefusedUnavailable = "unavailable"
	RefusedUnreadable  = "unreadable"
)

// AuditRefusalEnvelope is the JSON document of an audit that refused an
// input: inputs as given, no results, the refusal (input, where, reason,
// hint: the *inputerr.Error's parts; err's text where it is none) and the
// capture's diagnostics ds.
func AuditRefusalEnvelope(inputs []string, err error, ds []diag.Diagnostic, version string) Envelope {
	r := &JSONRefusal{Code: RefusedUnreadable, Reason: err.Error(), Diagnostics: diagnosticsJSON(ds)}
	var ie *inputerr.Error
	if errors.As(err, &ie) {
		r.Input, r.Where, r.Reason, r.Hint = ie.Path, ie.Where, ie.Problem, ie.Hint
		if ie.Err != nil {
			r.Reason += ": " + ie.Err.Error()
		}
	}
	if strings.HasPrefix(r.Reason, "the audit is unavailable") {
		r.Code = RefusedUnavailable
	}
	return Envelope{SchemaVersion: SchemaVersion, Kind: KindAudit, Tool: Tool{Name: "nsyscheck", Version: version},
		Inputs: inputs, Results: []any{}, Refused: r}
}

// Tool names the program that wrote an output.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// VerifyEnvelope wraps verify's results.
func VerifyEnvelope(results []*predictions.Result, version string) Envelope {
	inputs := make([]string, len(results))
	out := make([]jsonResult, len(results))
	for i, r := range results {
		inputs[i] = r.Input.Path
		out[i] = resultJSON(r)
	}
	return Envelope{SchemaVersion: SchemaVersion, Kind: KindVerify, Tool: Tool{Name: "nsyscheck", Version: version},
		Inputs: inputs, Results: out}
}

// WriteJSON writes v as indented JSON without HTML escaping, so that ">="
// reads as itself. The document goes to w in pieces of about jsonPiece
// bytes, each ending at the end of a line where no credential can span
// the cut (privacy.Pieces): a writer that masks what it is given
// (privacy.MaskWriter) then reads a piece at a time, not a copy of a
// document of hundreds of megabytes, and masks it as it would mask the
// document whole.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(linePieces{w})
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// linePieces passes each Write on to W in pieces (writeLines).
type linePieces struct{ W io.Writer }

func (l linePieces) Write(p []byte) (int, error) {
	if err := writeLines(l.W, p, jsonPiece); err != nil {
		return 0, err
	}
	return len(p), nil
}

// jsonPiece is about how much of a JSON document WriteJSON writes at once,
// and of a text document capped does.
const jsonPiece = 64 << 10

// writeLines writes data to w in the pieces privacy.Pieces cuts it into:
// of at least size bytes (the last may be shorter), each ending just after
// a newline that no credential spans.
func writeLines[T string | []byte](w io.Writer, data T, size int) error {
	return privacy.Pieces(data, size, func(p T) error {
		var err error
		switch p := any(p).(type) {
		case string:
			_, err = io.WriteString(w, p)
		case []byte:
			_, err = w.Write(p)
		}
		return err
	})
}
