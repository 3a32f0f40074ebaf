package program

import (
	"os"
	"strings"
	"testing"
)

// TestMiscasedKey: a key that names a field only in another case is found
// with the field's own name, in the shipped measurements file edited so;
// map keys (names) and fields without a JSON name of their own are not.
func TestMiscasedKey(t *testing.T) {
	shipped, err := os.ReadFile("../testdata/captures/h200-pinned/pinned.results.json")
	if err != nil {
		t.Fatal(err)
	}
	if k, f := MiscasedKey(shipped, &Measurements{}); k != "" {
		t.Fatalf("the shipped measurements file: %s (%s) said miscased", k, f)
	}
	edited := strings.Replace(string(shipped), `"gpu"`, `"GPU"`, 1)
	if k, f := MiscasedKey([]byte(edited), &Measurements{}); k != "GPU" || f != "gpu" {
		t.Errorf("GPU for gpu: got %q, %q", k, f)
	}
	type leaf struct {
		N     int `json:"n"`
		Frame string
	}
	type doc struct {
		Items []leaf            `json:"items"`
		Names map[string]leaf   `json:"names"`
		Deep  map[string][]leaf `json:"deep"`
	}
	for _, c := range []struct{ in, path, field string }{
		{`{"items": [{"n": 1}, {"N": 2}]}`, "items[1].N", "n"},
		{`{"names": {"Pass": {"n": 1}, "pass": {"n": 2}}}`, "", ""},
		{`{"deep": {"a": [{"frame": "x"}, {"n": 1, "x": {"N": 1}}, {"N": 3}]}}`, "deep.a[2].N", "n"},
		{`{"Items": []}`, "Items", "items"},
		{`{"items": [{"n": 1}`, "", ""},
	} {
		if k, f := MiscasedKey([]byte(c.in), &doc{}); k != c.path || f != c.field {
			t.Errorf("%s: got %q, %q; want %q, %q", c.in, k, f, c.path, c.field)
		}
	}
}
