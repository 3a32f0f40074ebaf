package report

import (
	"encoding/json"
	"io"

	"github.com/nsyscheck/nsyscheck/predictions"
)

// SchemaVersion is the version of the JSON output's shape, described by
// docs/output.schema.json. It changes when a field is renamed, removed or
// changes meaning; new optional fields do not change it.
const SchemaVersion = 1

// Kinds of JSON output, the envelope's "kind".
const (
	KindVerify = "verify"
)

// Envelope is the one top-level object of every JSON output, for one input
// or many: its schema version, what kind of output it is, the tool that
// wrote it, the inputs in the order given, and one result per input in the
// same order. Results' shape depends on Kind.
type Envelope struct {
	SchemaVersion int    `json:"schemaVersion"`
	Kind          string `json:"kind"`
	Tool          Tool   `json:"tool"`
	// Inputs are the inputs as the results name them.
	Inputs  []string `json:"inputs"`
	Results any      `json:"results"`
}

// Tool names the program that wrote an output.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// VerifyEnvelope wraps verify's results.
func VerifyEnvelope(results []*predictions.Result, version string) Envelope {
	inputs := make([]string, len(results))
	for i, r := range results {
		inputs[i] = r.Input.Path
	}
	if results == nil {
		results = []*predictions.Result{}
	}
	return Envelope{SchemaVersion: SchemaVersion, Kind: KindVerify, Tool: Tool{Name: "nsyscheck", Version: version},
		Inputs: inputs, Results: results}
}

// WriteJSON writes v as indented JSON without HTML escaping, so that ">="
// reads as itself.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
