package auditjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/coverage"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/privacy"
	"github.com/nsyscheck/nsyscheck/program"
	"github.com/nsyscheck/nsyscheck/source"
)

// maxOutputFile bounds the JSON of an audit read back.
const maxOutputFile = 256 << 20

// envelope is the part of the JSON envelope an audit is read from.
type envelope struct {
	Results []json.RawMessage `json:"results"`
	Check   *Check            `json:"check"`
}

// readAudit reads one audit of the JSON through its transfer type, its
// words (diagnostics, exposures) as notes, carried as they were written.
func readAudit(data json.RawMessage) (*audit.Audit, error) {
	if string(bytes.TrimSpace(data)) == "null" {
		return nil, nil
	}
	var j Audit
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, err
	}
	if at, ok := nullInArray(data); ok {
		return nil, fmt.Errorf("%s is null, where no audit writes one: the file was edited; write it again with nsyscheck audit --format json", at)
	}
	au := toAudit(j)
	if err := audit.Plausible(&au); err != nil {
		return nil, fmt.Errorf("%w: the file was edited; write it again with nsyscheck audit --format json", err)
	}
	// What the capture cannot show is made again, typed, from the coverage
	// the JSON holds (Cover, as the audit made it); a diagnostic of the
	// JSON that this does not make again (a loader's note, or a coverage
	// code of a file another nsyscheck wrote) is read as its words.
	made := map[diag.Code]bool{}
	if au.Coverage != nil {
		au.Cover(au.Coverage)
		for _, d := range au.Diagnostics {
			made[d.Code()] = true
		}
	}
	for _, d := range j.Diagnostics {
		if coverage.IsCode(d.Code) && made[d.Code] {
			continue
		}
		au.Diagnostics = append(au.Diagnostics, diag.Diagnostic{Level: d.Level, Detail: diag.Note{Of: d.Code, Text: d.Message}})
	}
	au.Exposures = []diag.Diagnostic{}
	for _, e := range j.Exposures {
		au.Exposures = append(au.Exposures, diag.Diagnostic{Level: diag.Warning, Detail: diag.Note{Of: privacy.DiagnosticCode, Text: e}})
	}
	return &au, nil
}

// ReadOutput reads the JSON `audit --format json` writes: the envelope
// (schemaVersion audit.EnvelopeVersion, kind "audit", one audit per input in
// results, the check), or the earlier form named audit.LegacySchemaVersion. ok is
// false when path is not an audit (a capture, or verify's JSON), err says
// why one cannot be read.
func ReadOutput(path string) (out *audit.Output, ok bool, err error) {
	own, ok := source.OwnOutput(path)
	if !ok || own.Kind != audit.EnvelopeKind {
		return nil, false, nil
	}
	// Its head says it is an audit: what cannot be read of it is a
	// malformed audit output, never taken for a capture.
	data, err := readOwn(path, "an audit's JSON", "nsyscheck audit --format json")
	if err != nil {
		return nil, true, err
	}
	if own.Legacy {
		return readLegacy(path, data)
	}
	if own.SchemaVersion == nil {
		var head struct {
			SchemaVersion json.RawMessage `json:"schemaVersion"`
		}
		_ = json.Unmarshal(data, &head)
		own.SchemaVersion = head.SchemaVersion
	}
	var version int
	if err := json.Unmarshal(own.SchemaVersion, &version); err != nil || version != audit.EnvelopeVersion {
		return nil, true, fmt.Errorf("%s: an audit of schemaVersion %s; this nsyscheck reads version %d: write it again with this nsyscheck's audit --format json, or use the nsyscheck that wrote it",
			path, bytes.TrimSpace(own.SchemaVersion), audit.EnvelopeVersion)
	}
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, true, fmt.Errorf("%s: an audit that cannot be read: %w", path, err)
	}
	results := make([]*audit.Audit, len(env.Results))
	for i, raw := range env.Results {
		if results[i], err = readAudit(raw); err != nil {
			return nil, true, fmt.Errorf("%s: an audit that cannot be read: %w", path, err)
		}
	}
	switch {
	case len(results) == 0 || len(results) > 2:
		return nil, true, fmt.Errorf("%s: an audit with %d results; want the capture's (and the one after the fix); write it again with nsyscheck audit CAPTURE [AFTER] --format json", path, len(results))
	case results[0] == nil || (len(results) == 2 && results[1] == nil):
		return nil, true, fmt.Errorf("%s: an audit with a null result; write it again with nsyscheck audit CAPTURE [AFTER] --format json", path)
	case env.Check != nil && len(results) != 2:
		return nil, true, fmt.Errorf("%s: an audit with a check but %d result(s); a check needs the capture before and after the fix", path, len(results))
	}
	out = &audit.Output{Before: results[0], Check: mapPtr(env.Check, toCheck)}
	if len(results) == 2 {
		out.After = results[1]
	}
	if err := checkAgrees(path, out); err != nil {
		return nil, true, err
	}
	return out, true, nil
}

// ReadRanks reads the audits of the JSON that audit --ranks --format json
// writes (kind audit.EnvelopeKindRanks: an audit per rank, and the ranks whose
// capture could not be audited, by capture, with why), or that audit of one
// capture writes (its one audit): each rank's audit, for the one table of a
// job audited in shards. ok is false when path is neither.
func ReadRanks(path string) (audits []*audit.Audit, failed []Failed, ok bool, err error) {
	own, ok := source.OwnOutput(path)
	if !ok || own.Kind != audit.EnvelopeKindRanks {
		out, ok, err := ReadOutput(path)
		if !ok || err != nil {
			return nil, nil, ok, err
		}
		if out.After != nil {
			return nil, nil, true, fmt.Errorf("%s: an audit of a capture and the one after its fix, not of one rank: give the audit of each rank's capture", path)
		}
		return []*audit.Audit{out.Before}, nil, true, nil
	}
	data, err := readOwn(path, "the audits of a job's ranks", "nsyscheck audit --ranks --format json")
	if err != nil {
		return nil, nil, true, err
	}
	if own.SchemaVersion == nil {
		// Past the head: the keys rewritten in another order.
		var head struct {
			SchemaVersion json.RawMessage `json:"schemaVersion"`
		}
		_ = json.Unmarshal(data, &head)
		own.SchemaVersion = head.SchemaVersion
	}
	var version int
	if err := json.Unmarshal(own.SchemaVersion, &version); err != nil || version != audit.EnvelopeVersion {
		return nil, nil, true, fmt.Errorf("%s: the audits of a job's ranks of schemaVersion %s; this nsyscheck reads version %d: write them again with this nsyscheck's audit --ranks --format json",
			path, bytes.TrimSpace(own.SchemaVersion), audit.EnvelopeVersion)
	}
	var env struct {
		Results []json.RawMessage `json:"results"`
		Table   json.RawMessage   `json:"ranks"`
		Ranks   rankRows          `json:"-"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, nil, true, fmt.Errorf("%s: the audits of a job's ranks that cannot be read: %w", path, err)
	}
	if len(env.Table) > 0 {
		if err := json.Unmarshal(env.Table, &env.Ranks); err != nil {
			return nil, nil, true, fmt.Errorf("%s: the audits of a job's ranks that cannot be read: ranks: %w", path, err)
		}
	}
	for i, raw := range env.Results {
		au, err := readAudit(raw)
		if err != nil {
			return nil, nil, true, fmt.Errorf("%s: result %d: an audit that cannot be read: %w", path, i+1, err)
		}
		if au == nil {
			return nil, nil, true, fmt.Errorf("%s: result %d is null; write the audits again with nsyscheck audit --ranks --format json", path, i+1)
		}
		audits = append(audits, au)
	}
	audited := map[string]int{}
	for _, au := range audits {
		audited[au.Capture]++
	}
	for i, r := range env.Ranks.Rows {
		if r.Err != "" {
			failed = append(failed, Failed{Capture: r.Capture, Err: r.Err})
			continue
		}
		if audited[r.Capture] == 0 {
			return nil, nil, true, fmt.Errorf("%s: ranks.rows[%d] lists %s as audited, but no result holds its audit: the file was edited; write the audits again with nsyscheck audit --ranks --format json",
				path, i, r.Capture)
		}
		audited[r.Capture]--
	}
	for _, au := range audits {
		if audited[au.Capture] > 0 {
			return nil, nil, true, fmt.Errorf("%s: the audit of %s is a result of the job, but no row of ranks.rows lists it: the file was edited; write the audits again with nsyscheck audit --ranks --format json",
				path, au.Capture)
		}
	}
	if len(audits) == 0 && len(failed) == 0 {
		return nil, nil, true, fmt.Errorf("%s: the audits of a job's ranks hold no rank, audited or failed: write them again with nsyscheck audit --ranks --format json", path)
	}
	if err := rowsAgree(path, env.Table, audits, failed); err != nil {
		return nil, nil, true, err
	}
	return audits, failed, true, nil
}

// ownKeys are the keys of audit's outputs that are read back, for
// program.MiscasedKey: encoding/json would read {"SourceKind": "scan"}
// into sourceKind, past DuplicateKey, whose keys are not alike.
type ownKeys struct {
	Results []Audit  `json:"results"`
	Check   *Check   `json:"check"`
	Ranks   rankRows `json:"ranks"`
}

// rankRows are the rows of audit --ranks's JSON that are read back: each
// rank's capture, and why it could not be audited.
type rankRows struct {
	Rows []struct {
		Capture string `json:"capture"`
		Err     string `json:"error"`
	} `json:"rows"`
}

// readOwn reads a file whose head says it is one of audit's outputs
// (what, written by the command again): one too large or nested deeper
// than any audit writes is a malformed output, and the error says so.
func readOwn(path, what, again string) ([]byte, error) {
	data, err := inputerr.ReadFile(path, maxOutputFile, what)
	if err != nil {
		return nil, err
	}
	if off, deep := program.TooDeep(data); deep {
		return nil, fmt.Errorf("%s: byte %d: %s nested deeper than %d levels, which no audit writes: a malformed audit output; write it again with %s",
			path, off, what, program.MaxJSONDepth, again)
	}
	// Mostly blanks between values (an output padded or edited): read
	// compacted, so that each scan below reads the values alone, and the
	// blanks are let go before they are read over and over.
	data = compactBlanks(data)
	if k := program.DuplicateKey(data); k != "" {
		return nil, fmt.Errorf("%s: %s is given twice in one object, which no audit writes, so which value holds is unclear: an edited audit output; write it again with %s",
			path, k, again)
	}
	if k, f := program.MiscasedKey(data, &ownKeys{}); k != "" {
		return nil, fmt.Errorf("%s: %s: keys are matched in their case, and no audit writes this one (it would be read as %q): an edited audit output; write it again with %s",
			path, k, f, again)
	}
	return maskStrings(data), nil
}

// compactBlanks returns JSON data without the blanks (space, tab, newline,
// carriage return) between its tokens when they are most of it, else data
// as it is. A run of blanks between two tokens neither of which is a
// bracket, brace, colon, comma or string stays one space, so that data
// reads as the same tokens, valid or not (1 2 does not become 12).
func compactBlanks(data []byte) []byte {
	// At most this many are blanks outside strings: most files are read
	// as they are after a count that runs at memory speed.
	if bytes.Count(data, []byte(" "))+bytes.Count(data, []byte("\n"))+bytes.Count(data, []byte("\t"))+bytes.Count(data, []byte("\r")) <= len(data)/2 {
		return data
	}
	out := make([]byte, 0, 1<<16)
	in, esc, gap := false, false, false
	bare := func(c byte) bool { return !strings.ContainsRune("{}[]:,\"", rune(c)) }
	for _, c := range data {
		switch {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case in:
			if c == '"' {
				in = false
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			gap = true
			continue
		case c == '"':
			in = true
		}
		if gap && len(out) > 0 && bare(out[len(out)-1]) && bare(c) {
			out = append(out, ' ')
		}
		gap = false
		out = append(out, c)
	}
	if len(out) > len(data)/2 {
		return data // the blanks were in strings
	}
	return out
}

// maskStrings masks the credentials in every string of an audit's JSON
// (privacy.MaskSecrets), as the audit masked the capture's names when it
// was written: a file written by another tool, or edited, carries none of
// them into what is rendered from it, the HTML report among them. JSON
// that does not decode is returned as it is, for the reader to refuse.
func maskStrings(data []byte) []byte {
	if len(privacy.FindSecrets(string(data))) == 0 {
		return data
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return data
	}
	out, err := json.Marshal(maskValue(v))
	if err != nil {
		return data
	}
	return out
}

// maskValue masks the strings of a decoded JSON value in place.
func maskValue(v any) any {
	switch x := v.(type) {
	case string:
		return privacy.MaskSecrets(x)
	case []any:
		for i := range x {
			x[i] = maskValue(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = maskValue(x[k])
		}
	}
	return v
}

// Failed is a rank's capture that could not be audited, and why.
type Failed struct {
	Capture string
	Err     string
}

// checkAgrees refuses a check read back that its two audits do not give:
// Compare of the audits (with the check's own Match) must make it again,
// verdict and numbers, so that no edited verdict (held beside numbers that
// say died) is rendered as the check's.
func checkAgrees(path string, out *audit.Output) error {
	if out.Check == nil || out.After == nil {
		return nil
	}
	if out.Before.Prediction == nil {
		return fmt.Errorf("%s: the audit before the fix has no prediction, so its check cannot be made again from it: the file was edited; write it again with nsyscheck audit BEFORE AFTER --format json", path)
	}
	again := audit.Compare(out.Before, out.After, out.Check.Match)
	if again.Verdict != out.Check.Verdict {
		return fmt.Errorf("%s: the check's verdict is %s, but the numbers of its two audits give %s: the file was edited; write it again with nsyscheck audit BEFORE AFTER --format json",
			path, out.Check.Verdict, again.Verdict)
	}
	var held, made map[string]json.RawMessage
	a, _ := json.Marshal(FromCheck(out.Check))
	b, _ := json.Marshal(FromCheck(again))
	if json.Unmarshal(a, &held) != nil || json.Unmarshal(b, &made) != nil {
		return fmt.Errorf("%s: the check cannot be made again from its two audits: write it again with nsyscheck audit BEFORE AFTER --format json", path)
	}
	if field, _, _ := firstDifference(held, made, true); field != "" {
		return fmt.Errorf("%s: the check's %s is not what its two audits give: the file was edited; write it again with nsyscheck audit BEFORE AFTER --format json", path, field)
	}
	return nil
}

// readLegacy reads the audit's JSON as it was before the envelope.
func readLegacy(path string, data []byte) (*audit.Output, bool, error) {
	var legacy struct {
		Before json.RawMessage `json:"before"`
		After  json.RawMessage `json:"after"`
		Check  *Check          `json:"check"`
	}
	fail := func(err error) (*audit.Output, bool, error) {
		return nil, true, fmt.Errorf("%s: an audit (%s) that cannot be read: %w", path, audit.LegacySchemaVersion, err)
	}
	if err := json.Unmarshal(data, &legacy); err != nil {
		return fail(err)
	}
	o := &audit.Output{Check: mapPtr(legacy.Check, toCheck)}
	var err error
	if len(legacy.Before) > 0 {
		if o.Before, err = readAudit(legacy.Before); err != nil {
			return fail(err)
		}
	}
	if len(legacy.After) > 0 {
		if o.After, err = readAudit(legacy.After); err != nil {
			return fail(err)
		}
	}
	if o.Before == nil {
		return nil, true, fmt.Errorf("%s: an audit with no \"before\" capture; write it again with nsyscheck audit CAPTURE --format json", path)
	}
	// A check of the earlier form was made by an earlier rule: it is read
	// as it was written.
	return o, true, nil
}
