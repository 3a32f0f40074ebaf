package audit

import (
	"math"
	"slices"
	"testing"

	"github.com/nsyscheck/nsyscheck/nsysrule"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// manyCopies are n 4 KiB cudaMemcpyAsync copies with their calls, every
// other one from pageable memory, as the 600,000-copy capture holds them.
func manyCopies(n int) []records.Op {
	ops := make([]records.Op, n)
	for i := range ops {
		start := int64(1_000_000 + i*5000)
		src := vocab.MemPinned
		if i%2 == 0 {
			src = vocab.MemPageable
		}
		ops[i] = records.Op{Kind: records.OpCopy, Start: start, End: start + 2400, Corr: int64(i + 1), PID: 22, Bytes: 4096,
			Copy: vocab.CopyHtoD, Src: src, Dst: vocab.MemDevice,
			Call: &records.Call{Name: "cudaMemcpyAsync", Start: start - 3000, End: start - 1000, Corr: int64(i + 1), PID: 22, TID: 22}}
	}
	return ops
}

// TestRuleScanDigest: the scan's answer is the digest ReadRule takes of the
// same copies as rows, and the audit's of its pageable async copies, so
// that CompareRule finds them agreeing without reading anything again.
func TestRuleScanDigest(t *testing.T) {
	ops := manyCopies(1000)
	s := NewRuleScan(nsysrule.Lists)
	h := s.Handler()
	var rows []Flagged
	acc := NewAccumulator()
	acc.ranges = newRangeIndex()
	for i := range ops {
		if err := h.Op(&ops[i]); err != nil {
			t.Fatal(err)
		}
		acc.Add(&ops[i])
		if nsysrule.Lists(&ops[i]) {
			r := nsysrule.RowOf(&ops[i])
			rows = append(rows, Flagged{PID: r.PID, Start: r.Start, Duration: r.Duration, MB: r.MB, Sized: r.Sized})
		}
	}
	read, err := ReadRule(FlaggedRows(rows))
	if err != nil {
		t.Fatal(err)
	}
	side := s.Side(func(func(Flagged) error) error {
		t.Error("the scan's rows read again though the sides agree")
		return nil
	})
	if side.Count() != 500 || side.digest != read.digest || side.digest != acc.rule || side.sizes != acc.ruleSizes || read.sizes != acc.ruleSizes {
		t.Errorf("the scan's %+v, the rows' %+v, the audit's %+v", side.digest, read.digest, acc.rule)
	}
	au := &Audit{rule: acc.rule, ruleBytes: acc.ruleBytes, ruleSizes: acc.ruleSizes}
	rc, err := au.CompareRule("r", RuleSource{Kind: RuleSourceScan}, side, func(*Accumulator) error { t.Error("the copies read again"); return nil })
	if err != nil || !rc.Agree || rc.Both != 500 || rc.RuleMB != 0 || rc.AuditMB != 0 {
		t.Errorf("compared: %+v, %v", rc, err)
	}
	// The rule's CSV prints each size to 1 kB (0.004 MB for 4096 bytes):
	// the same copies, their sizes within that rounding, agree without
	// the copies read again; given ten times their size (a CSV of another
	// export, or edited), they do not, and the sizes that differ are
	// named; two copies' sizes moved between them (0.003 and 0.005 MB, the
	// total kept) do not either, though the totals agree; rows without a
	// size (a CSV without its Bytes column) are held to none.
	for _, c := range []struct {
		name  string
		mb    func(i int) float64
		sized bool
		agree bool
		diff  int64
		sizes []SizeDiff
		total bool
	}{
		{"each 0.004 MB", func(int) float64 { return 0.004 }, true, true, 0, nil, false},
		{"each 0.041 MB", func(int) float64 { return 0.041 }, true, false, 500, []SizeDiff{{RuleMB: 0.041, AuditMB: 0.004, Copies: 500}}, true},
		{"two sizes moved", func(i int) float64 {
			return map[int]float64{0: 0.003, 1: 0.005}[i] + map[bool]float64{true: 0.004}[i > 1]
		}, true, false, 2,
			[]SizeDiff{{RuleMB: 0.003, AuditMB: 0.004, Copies: 1}, {RuleMB: 0.005, AuditMB: 0.004, Copies: 1}}, false},
		{"no sizes", func(int) float64 { return 0 }, false, true, 0, nil, false},
	} {
		edited := make([]Flagged, len(rows))
		for i, f := range rows {
			f.MB, f.Sized = c.mb(i), c.sized
			edited[i] = f
		}
		theirs, err := ReadRule(FlaggedRows(edited))
		if err != nil {
			t.Fatal(err)
		}
		again := func(a *Accumulator) error {
			if c.agree {
				t.Errorf("%s: the copies read again", c.name)
			}
			a.ranges = newRangeIndex()
			for i := range ops {
				a.Add(&ops[i])
			}
			return nil
		}
		rc, err := au.CompareRule("r", RuleSource{Kind: RuleSourceCSV}, theirs, again)
		if err != nil || rc.Agree != c.agree || rc.Both != 500 || rc.SizesDiffer != c.diff || !slices.Equal(rc.Sizes, c.sizes) {
			t.Errorf("%s: %+v, %v; want agree %v, %d sizes differing: %+v", c.name, rc, err, c.agree, c.diff, c.sizes)
		}
		if c.total != (rc.RuleMB != 0) || c.total && (math.Abs(rc.RuleMB-20.5) > 1e-9 || rc.AuditMB != 2.048) {
			t.Errorf("%s: rule %g MB, audit %g MB; want 20.5 and 2.048: %v", c.name, rc.RuleMB, rc.AuditMB, c.total)
		}
	}
}

// BenchmarkRuleScan is the scan's cost a copy, beside the audit's stream:
// the rule's definition and the digest of what it lists.
func BenchmarkRuleScan(b *testing.B) {
	ops := manyCopies(600_000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := NewRuleScan(nsysrule.Lists)
		h := s.Handler()
		for k := range ops {
			_ = h.Op(&ops[k])
		}
		if s.digest.n != 300_000 {
			b.Fatalf("%d copies listed", s.digest.n)
		}
	}
}
