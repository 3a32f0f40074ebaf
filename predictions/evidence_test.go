package predictions

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// Evidence is typed in Go and one "source: text" string in JSON's evidence;
// the string reads back to its source and text.
func TestEvidenceJSON(t *testing.T) {
	in := []Evidence{{Source: SourceTrace, Table: "t.csv", Text: "h2d 1 MiB: ratio 2.500"}, {Source: SourceProgram, Text: "a: b"}}
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
	if len(out) != 2 || out[0].Source != in[0].Source || out[0].Text != in[0].Text || out[1].Source != in[1].Source || out[1].Text != in[1].Text {
		t.Errorf("round trip %+v, want %+v", out, in)
	}
}

// A claim's JSON carries each evidence line typed under evidenceDetail, in
// the order of evidence, and the records' words are the text's.
func TestEvidenceDetailJSON(t *testing.T) {
	rows := Records{Group: "h2d 1 MiB pageable", Table: "p_cuda_api_trace.csv", Rows: &Span{First: 20, Last: 29}, Count: 10}
	corr := *corrRecords("pinned", "CUPTI_ACTIVITY_KIND_RUNTIME", []int64{233, 224, 225, 226, 227, 228, 229, 230, 231, 232})
	if got, want := rows.String(), "p_cuda_api_trace.csv data rows 20..29"; got != want {
		t.Errorf("rows %q, want %q", got, want)
	}
	if got, want := corr.String(), "corr 224..233 (10 ids)"; got != want {
		t.Errorf("corr %q, want %q", got, want)
	}
	c := Claim{ID: "1.floor", Evidence: []Evidence{
		{Source: SourceTrace, Table: "p_cuda_api_trace.csv", Records: []Records{rows, corr}, Text: "x (" + rows.String() + ", " + corr.String() + ")"},
		{Source: SourceProgram, File: "pinned.results.json", Text: "y"},
	}}
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Evidence       []string         `json:"evidence"`
		EvidenceDetail []EvidenceDetail `json:"evidenceDetail"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := []EvidenceDetail{
		{Source: SourceTrace, Table: "p_cuda_api_trace.csv", Records: []Records{rows, corr}, Text: c.Evidence[0].Text},
		{Source: SourceProgram, File: "pinned.results.json", Text: "y"},
	}
	if !reflect.DeepEqual(got.EvidenceDetail, want) {
		t.Errorf("evidenceDetail %+v, want %+v", got.EvidenceDetail, want)
	}
	if len(got.Evidence) != 2 || !strings.HasPrefix(got.Evidence[0], "trace: x (") {
		t.Errorf("evidence %q", got.Evidence)
	}
}
