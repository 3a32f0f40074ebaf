package report

import (
	"encoding/json"
	"github.com/nsyscheck/nsyscheck/source"
	"io"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/predictions"
	"github.com/nsyscheck/nsyscheck/ranks"
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
	Check *jsonCheck `json:"check,omitempty"`
	// Ranks is the table of a job's ranks (kind "audit-ranks"): a row per
	// rank, and the ranks that stand out against their peers. Absent
	// otherwise.
	Ranks *ranks.Summary `json:"ranks,omitempty"`
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
// reads as itself.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
