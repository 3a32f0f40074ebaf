package inputerr

import (
	"bufio"
	"io"
	"strings"
	"testing"
	"unicode/utf16"
)

// TextEncoding tells UTF-16 and UTF-32 text from UTF-8 by its byte-order
// mark, and UTF-16 without one by the zero byte beside each character; UTF-8
// (with its own mark or not), an SQLite header and text too short to tell
// are none.
func TestTextEncoding(t *testing.T) {
	le := func(s string) []byte {
		var b []byte
		for _, u := range utf16.Encode([]rune(s)) {
			b = append(b, byte(u), byte(u>>8))
		}
		return b
	}
	be := func(s string) []byte {
		var b []byte
		for _, u := range utf16.Encode([]rune(s)) {
			b = append(b, byte(u>>8), byte(u))
		}
		return b
	}
	const head = "Start (ns),Duration (ns),Name\n"
	for _, tc := range []struct {
		name string
		in   []byte
		want string
		bom  bool
	}{
		{"UTF-8", []byte(head), "", false},
		{"UTF-8 with its mark", append([]byte("\xEF\xBB\xBF"), head...), "", false},
		{"SQLite", []byte("SQLite format 3\x00\x10\x00\x01\x01"), "", false},
		{"UTF-16LE with its mark", append([]byte{0xFF, 0xFE}, le(head)...), "UTF-16LE", true},
		{"UTF-16BE with its mark", append([]byte{0xFE, 0xFF}, be(head)...), "UTF-16BE", true},
		{"UTF-16LE", le(head), "UTF-16LE", false},
		{"UTF-16BE", be(head), "UTF-16BE", false},
		{"UTF-32LE with its mark", []byte{0xFF, 0xFE, 0, 0, 'S', 0, 0, 0}, "UTF-32LE", true},
		{"one character of UTF-16", le("S"), "", false},
		{"empty", nil, "", false},
	} {
		got := TextEncoding(tc.in)
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("%s: %v, want UTF-8", tc.name, got)
		case tc.want != "" && (got == nil || got.Encoding != tc.want || got.BOM != tc.bom):
			t.Errorf("%s: %+v, want %s (mark %v)", tc.name, got, tc.want, tc.bom)
		}
	}
	e := NotUTF8("x.csv", &EncodingError{Encoding: "UTF-16LE", BOM: true}, "make the report again")
	if s := e.Error(); !strings.HasPrefix(s, "x.csv: the file is UTF-16LE text (with a byte-order mark), not UTF-8") || !strings.Contains(s, "iconv -f UTF-16LE -t UTF-8") {
		t.Errorf("error: %s", s)
	}
}

// StartText refuses a UTF-16 start, skips a UTF-8 byte-order mark, and
// leaves plain UTF-8 as it is.
func TestStartText(t *testing.T) {
	for _, c := range []struct {
		name, in, rest, enc string
	}{
		{"utf-8", "Time,Name\n", "Time,Name\n", ""},
		{"utf-8 with a mark", "\xEF\xBB\xBFTime,Name\n", "Time,Name\n", ""},
		{"utf-16le with a mark", "\xFF\xFET\x00i\x00", "", "UTF-16LE"},
		{"short", "T", "T", ""},
	} {
		br := bufio.NewReader(strings.NewReader(c.in))
		e := StartText(br)
		if c.enc != "" {
			if e == nil || e.Encoding != c.enc {
				t.Errorf("%s: %v, want %s", c.name, e, c.enc)
			}
			continue
		}
		rest, _ := io.ReadAll(br)
		if e != nil || string(rest) != c.rest {
			t.Errorf("%s: %v, rest %q, want %q", c.name, e, rest, c.rest)
		}
	}
}
