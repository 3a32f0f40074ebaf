package report

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/predictions"
)

// typedValues lists the types declared in a package's folder that have a
// method of one of the names (isFact, isWhy, isPiece, Code).
func typedValues(t *testing.T, dir string, methods ...string) map[string][]string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 {
				continue
			}
			for _, m := range methods {
				if fn.Name.Name != m {
					continue
				}
				recv := fn.Recv.List[0].Type
				if star, ok := recv.(*ast.StarExpr); ok {
					recv = star.X
				}
				if id, ok := recv.(*ast.Ident); ok {
					out[m] = append(out[m], id.Name)
				}
			}
		}
	}
	return out
}

// Every typed value a result carries — each evidence fact, each reason, each
// piece of the lesson's text, each diagnostic detail — has words of its own
// in report: a case of its type in a words function, not the fallback that
// prints its fields.
func TestEveryTypedValueHasWords(t *testing.T) {
	var src strings.Builder
	words, _ := filepath.Glob("*.go")
	for _, f := range words {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(data)
	}
	// Each pkg.Type the source names in a case list ("case " or ", "
	// before it), where what follows the name is neither { nor (: one scan
	// of the source instead of a regular expression per type.
	worded := map[string]bool{}
	text := src.String()
	for _, m := range regexp.MustCompile(`(case |, )(\w+\.\w+)`).FindAllStringSubmatchIndex(text, -1) {
		if end := m[5]; end < len(text) && text[end] != '{' && text[end] != '(' {
			worded[text[m[4]:end]] = true
		}
	}
	has := func(pkg, typ string) bool { return worded[pkg+"."+typ] }
	n := 0
	for m, types := range typedValues(t, "../predictions", "isFact", "isWhy", "isPiece", "Code") {
		for _, typ := range types {
			n++
			if !has("predictions", typ) {
				t.Errorf("predictions.%s (%s) has no words in report", typ, m)
			}
		}
	}
	for _, typ := range typedValues(t, "../diag", "Code")["Code"] {
		if typ == "Diagnostic" { // the shape, whose code is its detail's
			continue
		}
		n++
		if !has("diag", typ) {
			t.Errorf("diag.%s has no words in report", typ)
		}
	}
	for _, typ := range typedValues(t, "../coverage", "Code")["Code"] {
		n++
		if !has("coverage", typ) {
			t.Errorf("coverage.%s has no words in report", typ)
		}
	}
	if n < 100 {
		t.Errorf("found %d typed values; the parse missed some", n)
	}
}

// The fallback for a value without words shows its fields, so that nothing
// is lost; a detail outside every package's own is such a value.
func TestWordsFallback(t *testing.T) {
	type odd struct{ diag.Note }
	if got := detailWords(odd{diag.Note{Of: "x", Text: "y"}}); !strings.Contains(got, "y") {
		t.Errorf("fallback %q", got)
	}
	if got := factWords(predictions.Quantity{What: predictions.Say("calls"), Value: 3}); got != "calls: 3" {
		t.Errorf("quantity %q", got)
	}
}

// A count is worded for its number: "1 copy", "1 call", never "1 copies".
func TestPluralWords(t *testing.T) {
	one := []string{
		kindCounts([]predictions.KindCount{{Kind: "DtoH", N: 1}}),
		factWords(predictions.CallTotals{PageableMs: 1, PageableN: 1, PinnedMs: 1, PinnedN: 1, Ratio: 1}),
		lessonDetailWordsOf(t, predictions.AsyncRangeCount{Range: "async-pinned", N: 1}),
		whyWords(predictions.RangeCount{Range: "h2d-pinned", N: 1}),
		whyWords(predictions.SummaryBytesOnly{Count: 1, TotalMB: 1}),
	}
	for _, s := range one {
		if regexp.MustCompile(`\b1 (\w+ )?(copies|calls|instances|launches)\b`).MatchString(s) {
			t.Errorf("%q counts one in the plural", s)
		}
	}
	if got := plural(1, "call") + ", " + plural(2, "call") + ", " + counted(1, "copy", "copies") + ", " + counted(3, "copy", "copies"); got != "1 call, 2 calls, 1 copy, 3 copies" {
		t.Errorf("plural and counted: %q", got)
	}
}

// lessonDetailWordsOf is a diagnostic detail of the evaluation in words.
func lessonDetailWordsOf(t *testing.T, d any) string {
	t.Helper()
	s, ok := lessonDetailWords(d)
	if !ok {
		t.Fatalf("%T has no words", d)
	}
	return s
}
