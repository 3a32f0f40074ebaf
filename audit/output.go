package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/nsyscheck/nsyscheck/capture"
)

// maxOutputFile bounds the JSON of an audit read back.
const maxOutputFile = 256 << 20

// ReadOutput reads the JSON `audit --format json` writes; ok is false when
// path is not one (a capture, say), err says why one cannot be read.
func ReadOutput(path string) (out *Output, ok bool, err error) {
	if !strings.EqualFold(filepath.Ext(path), ".json") {
		return nil, false, nil
	}
	// A FIFO, a device or a huge file is no audit: the capture loader
	// says what it is.
	data, err := capture.ReadRegular(path, maxOutputFile, "an audit's JSON")
	if err != nil {
		return nil, false, nil
	}
	var head struct {
		SchemaVersion string `json:"schemaVersion"`
	}
	if json.Unmarshal(data, &head) != nil || head.SchemaVersion != SchemaVersion {
		return nil, false, nil
	}
	var o Output
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&o); err != nil {
		return nil, true, fmt.Errorf("%s: an audit (%s) that cannot be read: %w", path, SchemaVersion, err)
	}
	if o.Before == nil {
		return nil, true, fmt.Errorf("%s: an audit with no \"before\" capture; write it again with nsyscheck audit CAPTURE --format json", path)
	}
	return &o, true, nil
}
