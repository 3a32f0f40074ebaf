package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/privacy"
)

// TestWriteJSONInPieces: a document of many pieces written through the
// masking writer is the document masked whole, every credential masked
// wherever a piece ends, and each piece ends at a line's end.
func TestWriteJSONInPieces(t *testing.T) {
	var v []map[string]string
	for i := range 4000 {
		v = append(v, map[string]string{
			"name": fmt.Sprintf("step %d --password hunter%dxyz", i, i),
			"url":  fmt.Sprintf("postgres://admin:s3cr3t%d@db.internal:5432/x", i),
			"key":  "AKIA" + strings.Repeat(string(rune('A'+i%26)), 16),
		})
	}
	var whole bytes.Buffer
	enc := json.NewEncoder(&whole)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	if whole.Len() < 4*jsonPiece {
		t.Fatalf("the document is %d bytes, too few pieces of %d to test", whole.Len(), jsonPiece)
	}
	var pieces []int
	rec := writes(func(p []byte) { pieces = append(pieces, len(p)) })
	var got bytes.Buffer
	if err := WriteJSON(privacy.MaskWriter{W: &tee{&got, rec}}, v); err != nil {
		t.Fatal(err)
	}
	want := privacy.MaskSecrets(whole.String())
	if got.String() != want {
		t.Fatalf("masked in pieces, %d bytes, differs from masked whole, %d bytes", got.Len(), len(want))
	}
	if strings.Contains(got.String(), "hunter17xyz") || strings.Contains(got.String(), "s3cr3t17") {
		t.Errorf("a credential is left unmasked")
	}
	if len(pieces) < 4 {
		t.Errorf("%d pieces, want several", len(pieces))
	}
	var lines bytes.Buffer
	if err := writeLines(writes(func(p []byte) {
		if p[len(p)-1] != '\n' {
			t.Errorf("a piece of %d bytes ends inside a line", len(p))
		}
		lines.Write(p)
	}), whole.Bytes(), jsonPiece); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(lines.Bytes(), whole.Bytes()) {
		t.Error("the pieces do not make the document")
	}
}

// writes is a writer that hands each write to its function.
type writes func(p []byte)

func (r writes) Write(p []byte) (int, error) { r(p); return len(p), nil }

// tee writes to w and hands r each write.
type tee struct {
	w *bytes.Buffer
	r writes
}

func (t *tee) Write(p []byte) (int, error) { t.r(p); return t.w.Write(p) }

// TestTextInPieces: text written at once (as AuditText writes its
// document) goes to the masking writer in pieces that end at line ends,
// and masks as the document masked whole: a private key whose lines a
// piece's end would fall among is masked whole, no line of it shown.
func TestTextInPieces(t *testing.T) {
	const key = "-----BEGIN OPENSSH PRIVATE KEY-----\n" +
		"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n" +
		"QyNTUxOQAAACBvUHJpdmF0ZUtleUJvZHlGb3JUZXN0aW5nT25seQAAAJgAAAAAAAAAAAAA\n" +
		"-----END OPENSSH PRIVATE KEY-----\n"
	var doc strings.Builder
	for i := 0; doc.Len() < jsonPiece-40; i++ {
		fmt.Fprintf(&doc, "step%-8d 600000  span    3125   -0.7%%  2163    2134-2192\n", i)
	}
	doc.WriteString(key) // the first piece's end falls inside the key
	for i := 0; doc.Len() < 5*jsonPiece; i++ {
		fmt.Fprintf(&doc, "  region%d: 6.849 ms now --password hunter%dxyz\n", i, i)
	}
	var pieces []int
	var got bytes.Buffer
	mask := privacy.MaskWriter{W: &got}
	rec := writes(func(p []byte) {
		pieces = append(pieces, len(p))
		_, _ = mask.Write(p)
	})
	err := capped(rec, func(w io.Writer) error {
		_, err := io.WriteString(w, doc.String())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := privacy.MaskSecrets(doc.String()); got.String() != want {
		t.Fatalf("masked in pieces, %d bytes, differs from masked whole, %d bytes", got.Len(), len(want))
	}
	for _, body := range []string{"b3BlbnNzaC1rZXkt", "QyNTUxOQAAACBv", "hunter17xyz"} {
		if strings.Contains(got.String(), body) {
			t.Errorf("%q shows in the masked text", body)
		}
	}
	if len(pieces) < 4 || pieces[0] < jsonPiece || pieces[0] > jsonPiece+len(key)+200 {
		t.Errorf("pieces of %v bytes, want several, the first just past the key's end", pieces)
	}
}

// TestWriteJSONIndentsAsEncoder: the document WriteJSON writes, indented
// a part at a time, is byte for byte encoding/json's indented encoding:
// empty objects and arrays, strings holding quotes, backslashes, braces,
// escapes and "<>&", nested values, and documents of many pieces.
func TestWriteJSONIndentsAsEncoder(t *testing.T) {
	type row struct {
		Name  string            `json:"name"`
		N     int               `json:"n"`
		F     float64           `json:"f"`
		Tags  []string          `json:"tags"`
		Empty map[string]int    `json:"empty"`
		Nil   []int             `json:"nil"`
		Sub   map[string]any    `json:"sub,omitempty"`
		More  []map[string]bool `json:"more"`
	}
	var big []row
	for i := range 3000 {
		big = append(big, row{Name: fmt.Sprintf(`step "%d" \ {x: [1, 2]} <a&b> é `+"\t\n\u2028", i), N: i, F: float64(i) / 7,
			Tags: []string{}, Empty: map[string]int{}, Sub: map[string]any{"k": []any{1, "two", nil, true, map[string]any{}}},
			More: []map[string]bool{{}, {"a": true}}})
	}
	for _, v := range []any{nil, 1, "x", []int{}, map[string]int{}, []any{[]any{}, map[string]any{"": []any{}}}, big[:1], big} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		n := 0
		if err := WriteJSON(writes(func(p []byte) { got.Write(p); n++ }), v); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			i := 0
			for i < min(got.Len(), want.Len()) && got.Bytes()[i] == want.Bytes()[i] {
				i++
			}
			t.Fatalf("%T: %d bytes differ from the encoder's %d at %d: %q", v, got.Len(), want.Len(), i, got.Bytes()[max(0, i-40):min(got.Len(), i+40)])
		}
		if want.Len() > 4*jsonPiece && n < 4 {
			t.Errorf("%d bytes in %d writes, want pieces", want.Len(), n)
		}
	}
}
