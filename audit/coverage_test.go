package audit

import (
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/coverage"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/framework"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// TestGraphAndMigrationClasses: a graph's copy nodes come with their
// launch, which holds the host once a launch, as a batch call does; they
// are of API kind graph, and the findings' rules apply to them as to an
// async call. A unified-memory migration is a class of its own: API kind
// migration, managed memory, its cause in its key, no thread or stream in
// its name, and no pinning candidate.
func TestGraphAndMigrationClasses(t *testing.T) {
	a := NewAccumulator()
	scan := &capture.CopyScan{Path: "x"}
	h := a.Handler(scan)
	launch := &records.Call{Name: "cudaGraphLaunch", Start: 1_000, End: 900_000, Corr: 5, PID: 1, TID: 1}
	for i, dir := range []vocab.CopyKind{vocab.CopyHtoD, vocab.CopyDtoH} {
		src, dst := vocab.MemPageable, vocab.MemDevice
		if dir == vocab.CopyDtoH {
			src, dst = vocab.MemDevice, vocab.MemPageable
		}
		start := int64(10_000 + i*400_000)
		if err := h.Op(&records.Op{Kind: records.OpCopy, Copy: dir, Src: src, Dst: dst, Bytes: mb4, Start: start, End: start + 300_000,
			Corr: 5, PID: 1, Stream: 3, GraphNode: int64(10 + i), Call: launch}); err != nil {
			t.Fatal(err)
		}
	}
	for _, cause := range []string{"prefetch", "fault", "fault"} {
		if err := h.Op(&records.Op{Kind: records.OpCopy, Copy: vocab.CopyHtoD, Src: vocab.MemUnknown, Dst: vocab.MemUnknown,
			Bytes: 64 << 10, Start: 2_000_000, End: 2_010_000, PID: 1, Migration: cause}); err != nil {
			t.Fatal(err)
		}
	}
	au := a.Finish(scan, Replayed{})
	byLabel := map[string]*Class{}
	for _, c := range au.Classes {
		byLabel[c.Label()] = c
	}
	g := byLabel["cudaGraphLaunch HtoD pageable 1MiB-16MiB pid 1/tid 1 stream 3"]
	back := byLabel["cudaGraphLaunch DtoH pageable 1MiB-16MiB pid 1/tid 1 stream 3"]
	if g == nil || back == nil || g.APIKind != Graph || g.HostNs != 899_000 || back.HostNs != 0 {
		t.Fatalf("graph classes %+v %+v; all %v", g, back, labels(au.Classes))
	}
	if f := au.Finding(FindingSecretlySync); f.Count != 1 || f.Evidence[0].API != "cudaGraphLaunch" {
		t.Errorf("secretly synchronous: %+v", f)
	}
	if f := au.Finding(FindingNoOverlap); f.Count != 1 {
		t.Errorf("cannot overlap: %+v", f)
	}
	fault := byLabel["unified-memory fault HtoD 64KiB-1MiB pid 1"]
	if fault == nil || fault.Count != 2 || fault.APIKind != MigrationAPI || fault.HostMemory != Managed || fault.Migration != "fault" ||
		byLabel["unified-memory prefetch HtoD 64KiB-1MiB pid 1"] == nil {
		t.Errorf("migration classes: %v", labels(au.Classes))
	}
	if got := au.Sum("", "", MigrationAPI); got.Count != 3 || got.HostNs != 0 {
		t.Errorf("migrations' total %+v", got)
	}
	for _, c := range au.TopOffenders {
		if c.APIKind == MigrationAPI {
			t.Errorf("a migration among the top offenders: %s", c.Label())
		}
	}
}

func labels(cs []*Class) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Label()
	}
	return out
}

// TestAnswerOfAHiddenCapture: one capture that may lack copies is no pass,
// whatever its findings or gate say of the copies it holds; one with a
// finding still fails.
func TestAnswerOfAHiddenCapture(t *testing.T) {
	clean := &Audit{Findings: []Finding{{ID: FindingSecretlySync}}}
	incomplete := &Audit{Findings: []Finding{{ID: FindingSecretlySync}},
		Diagnostics: []diag.Diagnostic{{Level: diag.Warning, Detail: coverage.Incomplete{NotAll: []string{"CUDA"}}}}}
	broken := &Audit{Findings: []Finding{{ID: FindingSecretlySync, Count: 2}}, Diagnostics: incomplete.Diagnostics}
	// Read back from JSON, a diagnostic is a note with its code.
	noted := &Audit{Findings: clean.Findings, Diagnostics: []diag.Diagnostic{{Level: diag.Warning,
		Detail: diag.Note{Of: coverage.CodeGraphsWhole, Text: "30 CUDA graph launches ..."}}}}
	staged := &Audit{Findings: clean.Findings, Diagnostics: []diag.Diagnostic{{Level: diag.Warning, Detail: coverage.Staging{Framework: framework.JAX}}}}
	for _, c := range []struct {
		au     *Audit
		answer string
		passed bool
	}{{clean, AnswerPass, true}, {incomplete, AnswerUnavailable, false}, {broken, AnswerFail, false}, {noted, AnswerUnavailable, false},
		{staged, AnswerPass, true}} {
		out := &Output{Before: c.au}
		if out.Answer() != c.answer || out.Passed() != c.passed {
			t.Errorf("%v: answer %s, passed %v; want %s, %v", c.au.Diagnostics, out.Answer(), out.Passed(), c.answer, c.passed)
		}
	}
}

// TestStaging: JAX's audit whose every large host-to-device copy is pinned
// says XLA stages them (and the check's unseen rests on it); one pageable
// large copy, or another framework, and it does not.
func TestStaging(t *testing.T) {
	class := func(host HostMemory, bytes int64) *Class {
		c := &Class{ClassKey: ClassKey{API: "cuMemcpyHtoDAsync", APIKind: Async, Direction: vocab.CopyHtoD, HostMemory: host,
			SizeBucket: Buckets[BucketOf(bytes)].Name}, Count: 4}
		return c
	}
	jax := framework.Detection{Framework: framework.JAX, Clues: []framework.Clue{{Of: framework.JAX, Kind: framework.ClueKernel, Name: "loop_fusion", Count: 9}}}
	au := &Audit{Framework: jax, Classes: []*Class{class(Pinned, 32<<20), class(Pageable, 4)}}
	au.Cover(&coverage.Coverage{})
	if got := coverage.CodesIn(au.Diagnostics); !reflect.DeepEqual(got, []string{string(coverage.CodeStaging)}) {
		t.Fatalf("codes %v", got)
	}
	s := au.Diagnostics[0].Detail.(coverage.Staging)
	if s.Pinned != 4 || s.Clue.Name != "loop_fusion" {
		t.Errorf("staging %+v", s)
	}
	if u := stagesUnseen(au); u == nil || u.PinnedHtoD != 4 {
		t.Errorf("unseen %+v", u)
	}
	for _, other := range []*Audit{
		{Framework: jax, Classes: []*Class{class(Pinned, 32<<20), class(Pageable, 2<<20)}},
		{Framework: framework.Detection{Framework: framework.PyTorch}, Classes: []*Class{class(Pinned, 32<<20)}},
	} {
		if other.Cover(&coverage.Coverage{}); len(other.Diagnostics) != 0 || stagesUnseen(other) != nil {
			t.Errorf("%s: %v", other.Framework.Framework, other.Diagnostics)
		}
	}
}

// TestExpectCoverage: an expected-audit file's answer, copies by API kind
// and coverage codes are compared, and each can fail.
func TestExpectCoverage(t *testing.T) {
	au := &Audit{Findings: []Finding{{ID: FindingSecretlySync}}, Totals: []Total{{Direction: vocab.CopyHtoD, HostMemory: Managed, APIKind: MigrationAPI, Count: 5}},
		Diagnostics: []diag.Diagnostic{{Level: diag.Info, Detail: coverage.Migrations{}}}}
	out := &Output{Before: au}
	codes := []string{string(coverage.CodeMigrations)}
	ok := &Expectation{Answer: AnswerPass, APIKinds: map[string]int64{"migration": 5, "graph": 0}, Coverage: &codes}
	if d := ok.Compare(out); len(d) != 0 {
		t.Errorf("differs: %v", d)
	}
	none := []string{}
	bad := &Expectation{Answer: AnswerFail, APIKinds: map[string]int64{"migration": 4}, Coverage: &none}
	d := bad.Compare(out)
	if len(d) != 3 || d[2].Key != "coverage" || len(d[2].Want.([]string)) != 0 || !slices.Equal(d[2].Got.([]string), []string{string(coverage.CodeMigrations)}) {
		t.Errorf("differences %v", d)
	}
}

// TestExpectRefusal: a capture that holds no answer is expected refused,
// its reason naming what it cannot show; an audit, or another reason, is
// a difference.
func TestExpectRefusal(t *testing.T) {
	codes := []string{string(coverage.CodeIncomplete)}
	e := &Expectation{Refused: &codes}
	reader := errors.New("x.sqlite: the audit is unavailable: the capture holds no memory copy records (...)")
	refused := &Refusal{Err: reader, Limits: []diag.Diagnostic{{Level: diag.Warning, Detail: coverage.Incomplete{}}}}
	if d := e.CompareRefusal(refused); len(d) != 0 {
		t.Errorf("differs: %v", d)
	}
	// The code is taken from the typed limits, not from the words.
	worded := errors.New(reader.Error() + "; capture-incomplete: nsys says ...")
	if d := e.CompareRefusal(worded); len(d) != 1 {
		t.Errorf("a code in words only: %v", d)
	}
	if d := e.CompareRefusal(errors.New("x.sqlite: the audit is unavailable: the capture holds no memory copy records (...)")); len(d) != 1 {
		t.Errorf("no code named: %v", d)
	}
	if d := e.CompareRefusal(errors.New("x.sqlite: not an export")); len(d) != 2 {
		t.Errorf("another error: %v", d)
	}
	if d := e.Compare(&Output{Before: &Audit{}}); len(d) != 1 || d[0].Key != "refused" || !d[0].Lacks {
		t.Errorf("an audit where a refusal was expected: %v", d)
	}
}
