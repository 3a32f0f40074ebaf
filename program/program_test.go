package program

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

func TestDuplicateKey(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1,"b":2}`:                             "",
		`{"a":1,"a":2}`:                             "a",
		`{"copies":[{"ms":1},{"ms":2,"ms":3}]}`:     "copies[1].ms",
		`{"x":{"y":[1,{"z":1}],"w":{"z":1,"z":2}}}`: "x.w.z",
		`{"a":"a","b":"a"}`:                         "",
		`[{"a":1},{"a":1}]`:                         "",
		`{"a":[{"b":1,"b":1}]`:                      "a[0].b", // found before the syntax error
		`{"a":`:                                     "",
	} {
		if got := DuplicateKey([]byte(in)); got != want {
			t.Errorf("DuplicateKey(%s) = %q, want %q", in, got, want)
		}
	}
}

// FuzzDuplicateKey: DuplicateKey never panics, and a key it reports is
// really written twice in the input.
func FuzzDuplicateKey(f *testing.F) {
	b, err := os.ReadFile("../testdata/captures/h200-pinned/pinned.results.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"a":{"b":1,"b":2}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		k := DuplicateKey(data)
		if k == "" {
			return
		}
		key := k[strings.LastIndexAny(k, ".]")+1:]
		if bytes.Count(data, []byte(`"`+key+`"`)) < 2 && !bytes.Contains(data, []byte(`\`)) {
			t.Fatalf("DuplicateKey = %q, but %q appears once", k, key)
		}
	})
}

func TestBytesFromRate(t *testing.T) {
	for _, tc := range []struct {
		gbps, ms float64
		want     int64
	}{
		{3839.2, 0.035, 128 << 20}, {102.4, 1.311, 128 << 20}, {245.1, 0.548, 128 << 20},
		{24.7, 5.431, 128 << 20}, {1432.4, 0.047, 64 << 20}, {51.0, 1.316, 64 << 20},
		{1, 100, 95 << 20},
	} {
		if got := bytesFromRate(tc.gbps, tc.ms); got != tc.want {
			t.Errorf("bytesFromRate(%v, %v) = %d MiB, want %d MiB", tc.gbps, tc.ms, got>>20, tc.want>>20)
		}
	}
}

func TestTooDeep(t *testing.T) {
	deep := strings.Repeat("[", MaxJSONDepth+1) + strings.Repeat("]", MaxJSONDepth+1)
	for in, want := range map[string]int{
		`{"a":[{"b":[1]}]}`:               -1,
		strings.Repeat("[", MaxJSONDepth): -1, // as deep as allowed (and not valid: the decoder says so)
		deep:                              MaxJSONDepth,
		`{"a":"` + strings.Repeat("[", 100) + `"}`: -1,               // brackets in a string
		`{"a\"[[[":"\\"}`:                          -1,               // escaped quotes and backslashes
		`{"x":` + deep + `}`:                       MaxJSONDepth + 4, // the object is one level
	} {
		at, isDeep := TooDeep([]byte(in))
		if isDeep != (want >= 0) || isDeep && at != want {
			t.Errorf("TooDeep(%.40s...) = %d %v, want %d", in, at, isDeep, want)
		}
	}
	// The duplicate-key scan keeps nothing past the limit either.
	if k := DuplicateKey([]byte(strings.Repeat(`{"a":`, 2*MaxJSONDepth) + `{"b":1,"b":2}`)); k != "" {
		t.Errorf("DuplicateKey past the depth limit = %q", k)
	}
	_, err := ParseMeasurements(strings.NewReader(deep), "deep.json")
	if err == nil || !strings.Contains(err.Error(), "deep.json: byte 64: objects and arrays nested more than 64 levels deep") {
		t.Errorf("ParseMeasurements of %d nested arrays: %v", MaxJSONDepth+1, err)
	}
}

// endless is a stream of one byte without end, counting what was read.
type endless struct {
	b    byte
	read int
}

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = e.b
	}
	e.read += len(p)
	return len(p), nil
}

// TestLongString: a string past MaxJSONString is refused at its byte as
// the file streams in, before more of it is read than a buffer beyond the
// bound; a string at the bound is read as any other.
func TestLongString(t *testing.T) {
	shipped, err := os.ReadFile("../testdata/captures/h200-pinned/pinned.results.json")
	if err != nil {
		t.Fatal(err)
	}
	head := []byte(`{"pad":"`)
	x := &endless{b: 'x'}
	_, err = ParseMeasurements(io.MultiReader(bytes.NewReader(head), x), "long.json")
	at := len(head) + MaxJSONString
	want := fmt.Sprintf("long.json: byte %d: a string longer than 64 KiB: not a file nsyscheck reads", at)
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("ParseMeasurements of an endless string: %v, want %q", err, want)
	}
	if x.read > 2*MaxJSONString {
		t.Errorf("read %d bytes of the endless string before refusing it, want at most %d", x.read, 2*MaxJSONString)
	}
	// The shipped file with its GPU name the longest allowed, its escapes
	// counted as bytes: read, the name whole.
	name := strings.Repeat(`\"`, MaxJSONString/4) + strings.Repeat("g", MaxJSONString/2)
	at = bytes.Index(shipped, []byte(`"gpu": "`)) + len(`"gpu": "`)
	if at < len(`"gpu": "`) {
		t.Fatal(`no "gpu": " in the shipped results JSON`)
	}
	end := at + bytes.IndexByte(shipped[at:], '"')
	edited := append(append(append([]byte(nil), shipped[:at]...), name...), shipped[end:]...)
	m, err := ParseMeasurements(bytes.NewReader(edited), "at-bound.json")
	if err != nil {
		t.Fatalf("a GPU name of %d bytes: %v", len(name), err)
	}
	if want := strings.ReplaceAll(name, `\"`, `"`); m.GPU != want {
		t.Errorf("GPU name of %d bytes read as %d bytes", len(want), len(m.GPU))
	}
	// One byte more: refused.
	edited = append(append(append([]byte(nil), shipped[:at]...), name+"g"...), shipped[end:]...)
	if _, err := ParseMeasurements(bytes.NewReader(edited), "past.json"); err == nil || !strings.Contains(err.Error(), "a string longer than 64 KiB") {
		t.Errorf("a GPU name of %d bytes: %v, want refused as too long", len(name)+1, err)
	}
}

// DecodeHandWritten refuses what encoding/json would read in silence, each
// with the file and what to do, and reads a file saved with a byte-order
// mark.
func TestDecodeHandWritten(t *testing.T) {
	type file struct {
		Copies int `json:"copies"`
	}
	f := HandWritten{Kind: "a test file", Want: `{"copies": N}`, Deep: "a test file is one object", Twice: "value holds", Many: "file holds"}
	for _, c := range []struct{ data, want string }{
		{strings.Repeat("[", MaxJSONDepth+1), "x.json: byte "},
		{`{"copies": 1, "copies": 2}`, "x.json: copies is given twice, so which value holds is unclear; keep one"},
		{`{"Copies": 1}`, `x.json: Copies: keys are matched in their case; write "copies"`},
		{`{"copies": 1, "kernels": 2}`, `x.json: not a test file (json: unknown field "kernels"); want {"copies": N}`},
		{`{"copies": 1} {"copies": 2}`, "x.json: more than one JSON value in the file, so which file holds is unclear; keep one object"},
	} {
		var v file
		err := DecodeHandWritten("x.json", []byte(c.data), &v, f)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.40s: %v, want %q", c.data, err, c.want)
		}
	}
	var v file
	if err := DecodeHandWritten("x.json", []byte("\xEF\xBB\xBF{\"copies\": 3}"), &v, f); err != nil || v.Copies != 3 {
		t.Errorf("with a byte-order mark: %+v, %v", v, err)
	}
}
