package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
)

// maxOutputFile bounds the JSON of an audit read back.
const maxOutputFile = 256 << 20

// envelope is the part of the JSON envelope an audit is read from.
type envelope struct {
	Results []*Audit `json:"results"`
	Check   *Check   `json:"check"`
}

// ReadOutput reads the JSON `audit --format json` writes: the envelope
// (schemaVersion EnvelopeVersion, kind "audit", one audit per input in
// results, the check), or the earlier form named LegacySchemaVersion. ok is
// false when path is not an audit (a capture, or verify's JSON), err says
// why one cannot be read.
func ReadOutput(path string) (out *Output, ok bool, err error) {
	if !strings.EqualFold(filepath.Ext(path), ".json") {
		return nil, false, nil
	}
	// A FIFO, a device or a huge file is no audit: the capture loader
	// says what it is.
	data, err := inputerr.ReadFile(path, maxOutputFile, "an audit's JSON")
	if err != nil {
		return nil, false, nil
	}
	var head struct {
		SchemaVersion json.RawMessage `json:"schemaVersion"`
		Kind          string          `json:"kind"`
	}
	if json.Unmarshal(data, &head) != nil {
		return nil, false, nil
	}
	var legacy string
	if json.Unmarshal(head.SchemaVersion, &legacy) == nil && legacy == LegacySchemaVersion {
		return readLegacy(path, data)
	}
	if head.Kind != EnvelopeKind {
		return nil, false, nil
	}
	var version int
	if err := json.Unmarshal(head.SchemaVersion, &version); err != nil || version != EnvelopeVersion {
		return nil, true, fmt.Errorf("%s: an audit of schemaVersion %s; this nsyscheck reads version %d: write it again with this nsyscheck's audit --format json, or use the nsyscheck that wrote it",
			path, bytes.TrimSpace(head.SchemaVersion), EnvelopeVersion)
	}
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, true, fmt.Errorf("%s: an audit that cannot be read: %w", path, err)
	}
	switch {
	case len(env.Results) == 0 || len(env.Results) > 2:
		return nil, true, fmt.Errorf("%s: an audit with %d results; want the capture's (and the one after the fix); write it again with nsyscheck audit CAPTURE [AFTER] --format json", path, len(env.Results))
	case env.Results[0] == nil || (len(env.Results) == 2 && env.Results[1] == nil):
		return nil, true, fmt.Errorf("%s: an audit with a null result; write it again with nsyscheck audit CAPTURE [AFTER] --format json", path)
	case env.Check != nil && len(env.Results) != 2:
		return nil, true, fmt.Errorf("%s: an audit with a check but %d result(s); a check needs the capture before and after the fix", path, len(env.Results))
	}
	out = &Output{Before: env.Results[0], Check: env.Check}
	if len(env.Results) == 2 {
		out.After = env.Results[1]
	}
	return out, true, nil
}

// readLegacy reads the audit's JSON as it was before the envelope.
func readLegacy(path string, data []byte) (*Output, bool, error) {
	var o Output
	if err := json.Unmarshal(data, &o); err != nil {
		return nil, true, fmt.Errorf("%s: an audit (%s) that cannot be read: %w", path, LegacySchemaVersion, err)
	}
	if o.Before == nil {
		return nil, true, fmt.Errorf("%s: an audit with no \"before\" capture; write it again with nsyscheck audit CAPTURE --format json", path)
	}
	return &o, true, nil
}
