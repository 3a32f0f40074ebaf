package main

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// declaredCodes are the diagnostic codes the source declares: every
// constant of type diag.Code (Code inside package diag) with a string
// value, in any package's non-test file.
func declaredCodes(t *testing.T, root string) map[string]string {
	t.Helper()
	codes := map[string]string{} // code -> where declared
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != root) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				v := spec.(*ast.ValueSpec)
				if !isCodeType(v.Type, f.Name.Name) {
					continue
				}
				for _, val := range v.Values {
					lit, ok := val.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Errorf("%s: a diag.Code that is no string literal", fset.Position(val.Pos()))
						continue
					}
					s, _ := strconv.Unquote(lit.Value)
					codes[s] = fset.Position(lit.Pos()).String()
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return codes
}

// isCodeType reports whether a declared type is diag.Code.
func isCodeType(e ast.Expr, pkg string) bool {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		return ok && x.Name == "diag" && e.Sel.Name == "Code"
	case *ast.Ident:
		return pkg == "diag" && e.Name == "Code"
	}
	return false
}

// TestSchemaDiagnosticCodes: docs/output.schema.json's diagnosticCode enum
// is exactly the codes the source declares, so a new code cannot be
// missing from the schema, and an output with a misspelt code does not
// validate.
func TestSchemaDiagnosticCodes(t *testing.T) {
	root := filepath.Join("..", "..")
	declared := declaredCodes(t, root)
	if len(declared) < 20 {
		t.Fatalf("found only %d declared codes: %v", len(declared), declared)
	}
	data, err := os.ReadFile(filepath.Join(root, "docs", "output.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sch struct {
		Defs struct {
			DiagnosticCode struct {
				Enum []string `json:"enum"`
			} `json:"diagnosticCode"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &sch); err != nil {
		t.Fatal(err)
	}
	enum := sch.Defs.DiagnosticCode.Enum
	for code, where := range declared {
		if !slices.Contains(enum, code) {
			t.Errorf("code %q (%s) is missing from docs/output.schema.json's diagnosticCode enum", code, where)
		}
	}
	for _, code := range enum {
		if _, ok := declared[code]; !ok {
			t.Errorf("docs/output.schema.json's diagnosticCode enum holds %q, which no package declares", code)
		}
	}
	if !slices.IsSorted(enum) {
		t.Errorf("the diagnosticCode enum is not in order: %v", enum)
	}

	// A real output validates; the same with one code misspelt does not.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	code, out, errOut := runMain(t, []string{"verify", "--format", "json", filepath.Join(root, "testdata", "captures", "broken-pin")})
	if code == exitError {
		t.Fatalf("verify: %s", errOut)
	}
	if !strings.Contains(out, `"pinned-source-pageable"`) {
		t.Fatalf("broken-pin's JSON has no pinned-source-pageable diagnostic:\n%s", out)
	}
	if err := validateOutput([]byte(out)); err != nil {
		t.Fatalf("the real output does not validate: %v", err)
	}
	bad := strings.Replace(out, `"pinned-source-pageable"`, `"pinned-source-pagable"`, 1)
	if err := validateOutput([]byte(bad)); err == nil {
		t.Error("an output with a misspelt diagnostic code validates")
	}
}
