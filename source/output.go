package source

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/internal/regular"
)

// The kinds of nsyscheck's own JSON outputs, as their envelope's "kind"
// names them, and the schemaVersion of an audit's JSON of the earlier form
// (no envelope).
const (
	OutputVerify       = "verify"
	OutputAudit        = "audit"
	OutputAuditRanks   = "audit-ranks"
	LegacyAuditVersion = "nsyscheck.audit/v1"
)

// Output is what one of nsyscheck's own JSON outputs says of itself at its
// start: its kind, its schemaVersion as written, and the inputs it names.
type Output struct {
	// Kind is OutputVerify, OutputAudit or OutputAuditRanks.
	Kind string
	// SchemaVersion is the envelope's schemaVersion, as written; nil
	// where the head read holds none (a rewritten file whose keys put it
	// after a long results).
	SchemaVersion json.RawMessage
	// Legacy: an audit of the earlier form (schemaVersion
	// LegacyAuditVersion, no kind).
	Legacy bool
	// Inputs are the inputs it was made from, where its start names them.
	Inputs []string
}

// OwnOutput tells whether the file at path is one of nsyscheck's own JSON
// outputs, as Open tells it (kindOf, then the envelope's start): a file
// that is not, or cannot be read, is not. A file named as a capture (.sqlite,
// .nsys-rep, .qdrep, .csv) is not opened here: the commands ask this before
// Open reads the file, which refuses our own output by its content all the
// same, so a capture is opened once rather than twice.
func OwnOutput(path string) (*Output, bool) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".sqlite", ".nsys-rep", ".qdrep", ".csv":
		return nil, false
	}
	f, _, err := regular.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	head := make([]byte, nsysdb.SniffSize)
	n, err := f.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false
	}
	if kind, _ := kindOf(path, head[:n]); kind != nsysdb.KindJSON {
		return nil, false
	}
	out := ownOutputOf(head[:n])
	return out, out != nil
}

// ownOutputOf reads the start of a JSON file: nsyscheck's outputs name
// their schemaVersion and kind first and their inputs next (an audit of
// the earlier form only its schemaVersion); the top-level keys are read
// in any order (an output rewritten with its keys sorted) as far as the
// head holds them. nil where it is no output of ours: a measurements file,
// the program's results.
func ownOutputOf(head []byte) *Output {
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	out := &Output{}
	inputs := false // read already
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			break
		}
		switch key {
		case "schemaVersion":
			if dec.Decode(&out.SchemaVersion) != nil {
				return nil
			}
			var s string
			out.Legacy = json.Unmarshal(out.SchemaVersion, &s) == nil && s == LegacyAuditVersion
			if out.Legacy {
				out.Kind = OutputAudit
				return out
			}
		case "kind":
			var kind string
			if dec.Decode(&kind) != nil || kind != OutputVerify && kind != OutputAudit && kind != OutputAuditRanks {
				return nil
			}
			out.Kind = kind
		case "inputs":
			if dec.Decode(&out.Inputs) != nil {
				out.Inputs = nil
				return out.known()
			}
			inputs = true
		default:
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return out.known()
			}
		}
		if out.Kind != "" && inputs && out.SchemaVersion != nil {
			return out
		}
	}
	return out.known()
}

// known is the output where its kind was told, else nil.
func (o *Output) known() *Output {
	if o.Kind == "" {
		return nil
	}
	return o
}
