package predictions

import (
	"encoding/json"
	"testing"
)

// Evidence is typed in Go and one "source: text" string in JSON, both ways.
func TestEvidenceJSON(t *testing.T) {
	in := []Evidence{evf(SourceTrace, "h2d %s: ratio %.3f", "1 MiB", 2.5), {Source: SourceProgram, Text: "a: b"}}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `["trace: h2d 1 MiB: ratio 2.500","program: a: b"]`; string(data) != want {
		t.Errorf("JSON %s, want %s", data, want)
	}
	var out []Evidence
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0] != in[0] || out[1] != in[1] {
		t.Errorf("round trip %+v, want %+v", out, in)
	}
}
