package report

import (
	"bytes"
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
// reads as itself. The document is encoded compact, then indented a part
// at a time into a privacy.PieceWriter, which writes it to w in pieces of
// about jsonPiece bytes cut where no credential can span the cut: a
// writer that masks what it is given (privacy.MaskWriter) then reads a
// piece at a time and masks it as it would mask the document whole, and
// the indented document is never held whole beside the compact one (an
// audit of 600,000 NVTX regions writes 1 GB of JSON). A document that
// privacy.WholeOnly reports is indented whole and cut by privacy.Pieces.
// The bytes are encoding/json's indented encoding.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(&indented{w: w})
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// indented is the writer WriteJSON's encoder writes its compact document
// to, in one write: it indents the document into w as WriteJSON says,
// reading it where the encoder holds it, not copied.
type indented struct{ w io.Writer }

func (d *indented) Write(compact []byte) (int, error) {
	if privacy.WholeOnly(compact) {
		var whole bytes.Buffer
		if err := json.Indent(&whole, compact, "", "  "); err != nil {
			return 0, err
		}
		if err := writeLines(d.w, whole.Bytes(), jsonPiece); err != nil {
			return 0, err
		}
		return len(compact), nil
	}
	pw := &privacy.PieceWriter{W: d.w, Size: jsonPiece}
	if err := indentTo(pw, compact, jsonPiece); err != nil {
		return 0, err
	}
	if err := pw.Flush(); err != nil {
		return 0, err
	}
	return len(compact), nil
}

// indentTo writes src, compact JSON as encoding/json writes it (no white
// space outside its strings), to w indented as json.Indent(dst, src, "",
// "  ") indents it, in parts of about size bytes.
func indentTo(w io.Writer, src []byte, size int) error {
	out := make([]byte, 0, size+1024)
	depth := 0
	needIndent := false // after { or [: an empty object or array stays {} or []
	inString, escaped := false, false
	newline := func() {
		out = append(out, '\n')
		for range depth {
			out = append(out, ' ', ' ')
		}
	}
	for i, c := range src {
		if inString {
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		} else {
			if needIndent && c != '}' && c != ']' {
				needIndent = false
				depth++
				newline()
			}
			switch c {
			case '"':
				inString = true
				out = append(out, c)
			case '{', '[':
				needIndent = true
				out = append(out, c)
			case ',':
				out = append(out, c)
				newline()
			case ':':
				out = append(out, c, ' ')
			case '}', ']':
				if needIndent {
					needIndent = false
				} else {
					depth--
					newline()
				}
				out = append(out, c)
			default:
				out = append(out, c)
			}
		}
		if len(out) >= size || i == len(src)-1 {
			if _, err := w.Write(out); err != nil {
				return err
			}
			out = out[:0]
		}
	}
	return nil
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
