package auditjson

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestCompactBlanks: JSON mostly of blanks is read compacted, as the same
// tokens, valid or not; JSON whose blanks are few, or in its strings, is
// read as it is.
func TestCompactBlanks(t *testing.T) {
	pad := strings.Repeat(" \n\t\r", 64)
	for _, c := range []struct {
		name, in, want string
	}{
		{"padded object", `{` + pad + `"a"` + pad + `:` + pad + `[1,` + pad + `true]` + pad + `}`, `{"a":[1,true]}`},
		{"strings keep their blanks and escapes", `{"a b": "x \" ` + pad[:8] + `y"` + pad + `}`, `{"a b":"x \" ` + pad[:8] + `y"}`},
		{"two numbers stay two", `[1` + pad + `2]`, `[1 2]`},
		{"a word stays split", `[tru` + pad + `e]`, `[tru e]`},
		{"few blanks", `{"a": 1, "b": [1, 2, 3]}`, `{"a": 1, "b": [1, 2, 3]}`},
		{"the blanks in a string", `["` + pad + pad + `"]`, `["` + pad + pad + `"]`},
	} {
		got := string(compactBlanks([]byte(c.in)))
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		if json.Valid([]byte(c.in)) != json.Valid([]byte(got)) {
			t.Errorf("%s: valid %v before, %v after", c.name, json.Valid([]byte(c.in)), json.Valid([]byte(got)))
		}
		if json.Valid([]byte(c.in)) {
			var a, b bytes.Buffer
			if json.Compact(&a, []byte(c.in)) != nil || json.Compact(&b, []byte(got)) != nil || a.String() != b.String() {
				t.Errorf("%s: compacts to %q, the input to %q", c.name, b.String(), a.String())
			}
		}
	}
}
