package diag

import (
	"strings"
	"testing"
)

func TestList(t *testing.T) {
	var l List
	if got := l.Items(); got == nil || len(got) != 0 {
		t.Fatalf("empty list %#v, want an empty non-nil slice", got)
	}
	a := Note{Of: "a", Text: "one"}
	l.Add(Info, a)
	l.Add(Info, Note{Of: "a", Text: "one"})
	l.Add(Info, Note{Of: "a", Text: "two"})
	l.Add(Warning, TraceLost{Loss: TraceLoss{Short: []CallShortfall{{API: "cudaMemcpy", Held: 1, Timed: 2}}}})
	l.Add(Warning, TraceLost{Loss: TraceLoss{Short: []CallShortfall{{API: "cudaMemcpy", Held: 1, Timed: 2}}}})
	items := l.Items()
	if len(items) != 3 {
		t.Fatalf("%d items, want 3 (equal details once each): %+v", len(items), items)
	}
	if items[0].Code() != "a" || items[2].Code() != CodeTraceLost {
		t.Errorf("codes %s, %s", items[0].Code(), items[2].Code())
	}
	if !Has(items, CodeTraceLost) || Has(items, CodePCIe) {
		t.Error("Has is wrong")
	}
}

func TestMapPaths(t *testing.T) {
	ds := []Diagnostic{
		{Level: Info, Detail: Note{Of: CodeInputSubstituted, Text: "read /home/a/x.sqlite"}},
		{Level: Warning, Detail: ScanFailed{File: "/home/a/x.sqlite", Err: "open /home/a/x.sqlite: denied"}},
		{Level: Info, Detail: PCIeLink{GenMax: 5}},
	}
	MapPaths(ds, func(s string) string { return strings.ReplaceAll(s, "/home/a/", "") })
	if n := ds[0].Detail.(Note); n.Text != "read x.sqlite" {
		t.Errorf("note %q", n.Text)
	}
	if f := ds[1].Detail.(ScanFailed); f.File != "x.sqlite" || f.Err != "open x.sqlite: denied" {
		t.Errorf("scan failure %+v", f)
	}
	if ds[2].Detail.(PCIeLink).GenMax != 5 {
		t.Error("a detail without paths changed")
	}
}
