package ctlchar

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	cases := []struct{ in, want string }{
		{"NVIDIA H200", "NVIDIA H200"},
		{"tab\tand\nnewline stay", "tab\tand\nnewline stay"},
		{"\x1b]0;pwned\x07NVIDIA H200", `\x1b]0;pwned\x07NVIDIA H200`},
		{"\x1b[2J\x1b[Hclean", `\x1b[2J\x1b[Hclean`},
		{"step 1\rstep 9", `step 1\x0dstep 9`},
		{"nul\x00 del\x7f", `nul\x00 del\u007f`},
		{"csi\u009b31m", `csi\u009b31m`},
		{"abc\u202edcba", `abc\u202edcba`},
		{"bad \xff byte", `bad \xff byte`},
		{"step\u200b", `step\u200b`},
		{"\ufeffstep and st\u200dep\u2060", `\ufeffstep and st\u200dep\u2060`},
		{"µs ≥ 1.3x … 日本", "µs ≥ 1.3x … 日本"},
		{"", ""},
	}
	for _, c := range cases {
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
		if Has(c.in) != (c.in != c.want) {
			t.Errorf("Has(%q) = %v", c.in, Has(c.in))
		}
	}
}

// TestWriterSplits: a character cut between two writes comes out whole,
// wherever the cut falls, and the result is what Escape gives.
func TestWriterSplits(t *testing.T) {
	in := "a\x1b[2J µs ≥ 日本 \u009b \U0001F600 \xff end"
	want := Escape(in)
	for cut := 0; cut <= len(in); cut++ {
		var out bytes.Buffer
		w := &Writer{W: &out}
		for _, part := range []string{in[:cut], in[cut:]} {
			if n, err := w.Write([]byte(part)); err != nil || n != len(part) {
				t.Fatalf("Write = %d, %v", n, err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Errorf("cut at %d: %q, want %q", cut, out.String(), want)
		}
	}
	// A character never completed is written at Flush, as bytes.
	var out bytes.Buffer
	w := &Writer{W: &out}
	w.Write([]byte("x\xe6\x97"))
	if out.String() != "x" {
		t.Errorf("before Flush: %q, want the cut character held back", out.String())
	}
	w.Flush()
	if out.String() != `x\xe6\x97` {
		t.Errorf("after Flush: %q", out.String())
	}
}

// TestJSONKeepsStrings: JSON that encoding/json wrote is still valid after
// escaping and decodes to exactly the strings it held.
func TestJSONKeepsStrings(t *testing.T) {
	names := []string{"\x1b]0;title\x07", "del\x7f", "c1\u0085\u009b", "rtl\u202e\u2066x", "ok µs"}
	data, err := json.Marshal(names)
	if err != nil {
		t.Fatal(err)
	}
	esc := Escape(string(data))
	if Has(esc) {
		t.Errorf("escaped JSON still holds control characters: %q", esc)
	}
	var back []string
	if err := json.Unmarshal([]byte(esc), &back); err != nil {
		t.Fatalf("escaped JSON does not decode: %v\n%s", err, esc)
	}
	if strings.Join(back, "|") != strings.Join(names, "|") {
		t.Errorf("decoded %q, want %q", back, names)
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b]0;x\x07", "\r\n\t", "\u009b\u202e", "\xff\xe6\x97", "日本\x7f"} {
		f.Add(s, uint8(1))
	}
	f.Fuzz(func(t *testing.T, s string, cut uint8) {
		esc := Escape(s)
		if Has(esc) || !utf8.ValidString(esc) {
			t.Fatalf("Escape(%q) = %q still holds control characters", s, esc)
		}
		if Escape(esc) != esc {
			t.Fatalf("Escape is not idempotent on %q", s)
		}
		if !Has(s) && esc != s {
			t.Fatalf("Escape changed %q, which holds nothing to escape", s)
		}
		var out bytes.Buffer
		w := &Writer{W: &out}
		i := int(cut) % (len(s) + 1)
		w.Write([]byte(s[:i]))
		w.Write([]byte(s[i:]))
		w.Flush()
		if out.String() != esc {
			t.Fatalf("Writer split at %d gave %q, Escape %q", i, out.String(), esc)
		}
	})
}

// TestLine: a newline in a name printed within a line is escaped with the
// rest, and a name without one is returned as it is.
func TestLine(t *testing.T) {
	for in, want := range map[string]string{
		"run/pinned.sqlite":              "run/pinned.sqlite",
		"x\nprediction 1  died\n.sqlite": `x\x0aprediction 1  died\x0a.sqlite`,
		"a\x1b]0;t\x07\nb":               `a\x1b]0;t\x07\x0ab`,
		"tab\tkept":                      "tab\tkept",
	} {
		if got := Line(in); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
	}
}
