package audit

import (
	"fmt"
	"math"
	"sort"

	"github.com/nsyscheck/nsyscheck/records"
)

// Flagged is one copy NVIDIA's cuda_memcpy_async rule lists: the process
// and the copy's start and duration on the GPU.
type Flagged struct {
	PID      int64
	Start    int64
	Duration int64
	MB       float64
	// Sized says the rule gives the copy's size (MB 0 otherwise).
	Sized bool
}

// RuleComparison sets the audit's pageable async copies beside the ones
// NVIDIA's cuda_memcpy_async rule lists.
type RuleComparison struct {
	Rule      string
	Available bool
	// Source says how the rule's output was had; Note why it was not,
	// when it was not.
	Source RuleSource
	Note   string

	RuleCount  int // copies the rule lists
	AuditCount int // pageable async copies the audit found
	Both       int
	Agree      bool
	// RuleMB and AuditMB are, where the two list the same copies but of
	// other sizes, the MB (1e6 bytes) each says they moved: the rule's
	// sizes (printed to 1 kB a copy) against the records'; 0 otherwise.
	RuleMB  float64
	AuditMB float64
	// SizesDiffer counts the copies both list that the rule gives
	// another size than the records do (beyond the 1 kB the rule prints
	// a size to), and Sizes says which sizes, most copies first (at most
	// MaxEvidence); none where the rule gives no size at all.
	SizesDiffer int64
	Sizes       []SizeDiff
	// OnlyRule and OnlyAudit list (at most MaxEvidence of) the copies one
	// side has and the other has not.
	OnlyRule  []Flagged
	OnlyAudit []Evidence
}

// SizeDiff is one size the rule gives copies that the capture's records
// give another: how many copies, of RuleMB in the rule and AuditMB in the
// records (each to 1 kB).
type SizeDiff struct {
	RuleMB  float64
	AuditMB float64
	Copies  int64
}

// RuleSource says how the rule's copies were had: nsys analyze run on
// the capture's export, the rule's CSV beside the capture, or the rule's
// definition applied to the audit's own records; read back from JSON, its
// kind and its words as written.
type RuleSource struct {
	Kind RuleSourceKind
	// Path is the export nsys analyze ran on, or the CSV.
	Path string
	// Capped says the CSV holds exactly as many rows as nsys analyze lists
	// by default (nsysrule.DefaultRows): it may lack copies.
	Capped bool
	// Text is the source in words as a JSON read back wrote them ("" for
	// a source found here).
	Text string
}

// RuleSourceKind is how the rule's copies were had.
type RuleSourceKind int

// How the rule's copies were had.
const (
	RuleSourceNone    RuleSourceKind = iota // not had
	RuleSourceAnalyze                       // nsys analyze, run beside the audit's stream
	RuleSourceCSV                           // the rule's CSV beside the capture
	RuleSourceRead                          // words of a JSON read back, of no kind it names
	RuleSourceScan                          // the rule's definition applied to the records the audit streamed; nsys did not run
)

// RuleRows streams the copies a rule lists, in its order, to yield; it
// may be called more than once and gives the same rows each time.
type RuleRows func(yield func(Flagged) error) error

// FlaggedRows streams a slice of rows.
func FlaggedRows(rows []Flagged) RuleRows {
	return func(yield func(Flagged) error) error {
		for _, r := range rows {
			if err := yield(r); err != nil {
				return err
			}
		}
		return nil
	}
}

// RuleSide is the rule's copies read down to their count and digest, and
// the way to read them again.
type RuleSide struct {
	rows   RuleRows
	digest ruleDigest
	// mb sums the sizes the rule gives its copies, in MB; sizes sums a
	// hash of each copy's process, start and size in kB (sizeHash).
	mb    float64
	sizes uint64
	// sized says the rule gives a size for some copy: one that gives
	// none (a CSV without its size column) is not held to the records'.
	sized bool
}

// Count is how many copies the rule lists.
func (s *RuleSide) Count() int { return int(s.digest.n) }

// ReadRule reads the rule's copies once, down to their count and digest
// (sums of a hash of each copy's process and start); nothing of them is
// kept.
func ReadRule(rows RuleRows) (*RuleSide, error) {
	s := &RuleSide{rows: rows}
	if err := rows(func(f Flagged) error {
		s.digest.add(f.PID, f.Start)
		s.mb += f.MB
		s.sizes += sizeHash(f.PID, f.Start, kBOfMB(f.MB))
		s.sized = s.sized || f.Sized
		return nil
	}); err != nil {
		return nil, err
	}
	return s, nil
}

// RuleScan answers the rule from the records the audit streams: each copy
// the rule's definition lists (lists, of copies with their calls) is
// summed, as it streams, into the
// digest ReadRule takes of the rule's CSV, so that CompareRule sets the two
// sides beside each other as it does for the CSV. Nothing of a copy is
// kept.
type RuleScan struct {
	lists  func(*records.Op) bool
	digest ruleDigest
	mb     float64
	sizes  uint64
}

// NewRuleScan returns a scan that sums the copies lists says the rule
// lists.
func NewRuleScan(lists func(*records.Op) bool) *RuleScan { return &RuleScan{lists: lists} }

// Handler is the records.Handler that feeds the scan: the copies (each
// with its call), nothing else.
func (s *RuleScan) Handler() records.Handler {
	return records.Handler{Op: func(o *records.Op) error {
		// The copy by its call's process, as the accumulator takes the
		// audit's (a CSV report names the process on the call alone).
		if s.lists(o) && o.Call != nil {
			s.digest.add(o.Call.PID, o.Start)
			s.mb += float64(o.Bytes) / 1e6
			s.sizes += sizeHash(o.Call.PID, o.Start, kBOfBytes(o.Bytes))
		}
		return nil
	}}
}

// Side is the scan's answer as CompareRule takes it, once the records have
// streamed; rows streams the copies the rule lists again (a second read of
// the capture, in the rule's order), which CompareRule reads only where
// the two sides' digests differ.
func (s *RuleScan) Side(rows RuleRows) *RuleSide {
	return &RuleSide{rows: rows, digest: s.digest, mb: s.mb, sizes: s.sizes, sized: s.digest.n > 0}
}

// CompareRule matches the copies the rule lists (theirs, from ReadRule)
// with the audit's pageable async copies by process and GPU start, and
// records the result in au.NVIDIA. Both sides are first compared whole, by
// their counts and digests, which the accumulator took as the copies
// streamed (of each copy's process and start, and with its size to 1 kB):
// when they agree, nothing else is read. When they differ, the rule's rows
// are read again and held sorted, and again streams the capture's copies a
// second time into the accumulator it is given, to count the copies both
// list, name those only one does, and set each size the rule gives beside
// the records' (SizesDiffer, Sizes). A rule that gives no size at all (a
// CSV without its size column) is not held to the records' sizes.
func (au *Audit) CompareRule(rule string, source RuleSource, theirs *RuleSide, again func(*Accumulator) error) (*RuleComparison, error) {
	rc := &RuleComparison{Rule: rule, Available: true, Source: source, AuditCount: int(au.rule.n),
		RuleCount: theirs.Count(), OnlyRule: []Flagged{}, OnlyAudit: []Evidence{}}
	flagged := theirs.rows
	sized := theirs.sized
	if theirs.digest == au.rule && (!sized || theirs.sizes == au.ruleSizes) {
		rc.Both, rc.Agree = rc.RuleCount, true
		rc.sizes(sized, theirs.mb, au.ruleBytes)
		au.NVIDIA = rc
		return rc, nil
	}
	l := &ruleList{sized: sized, sizes: map[[2]int64]int64{}}
	if err := flagged(func(f Flagged) error { l.rows = append(l.rows, f); return nil }); err != nil {
		return nil, err
	}
	l.index()
	a := NewAccumulator()
	a.list = l
	if err := again(a); err != nil {
		return nil, fmt.Errorf("reading the copies again to set them beside the %s rule's: %w", rule, err)
	}
	if a.rule != au.rule {
		return nil, fmt.Errorf("the copies read again to set them beside the %s rule's are not those read first (%d pageable async copies, then %d)",
			rule, au.rule.n, a.rule.n)
	}
	rc.Both = l.both
	for i, f := range l.rows {
		if !l.seen[i] && len(rc.OnlyRule) < MaxEvidence {
			rc.OnlyRule = append(rc.OnlyRule, f)
		}
	}
	rc.OnlyAudit = l.only.sorted()
	rc.SizesDiffer, rc.Sizes = l.sizeDiffs()
	rc.Agree = rc.Both == rc.RuleCount && rc.Both == rc.AuditCount
	if rc.Agree {
		rc.sizes(sized, theirs.mb, au.ruleBytes)
		rc.Agree = rc.Agree && rc.SizesDiffer == 0
	}
	au.NVIDIA = rc
	return rc, nil
}

// sizes holds a comparison of the same copies to their sizes: the rule's
// MB (ruleMB, each copy's printed to 1 kB) must come within half a kB a
// copy of the bytes the audit's records give them (auditBytes), else the
// two do not agree (a rule's CSV of another export, or an edited one) and
// RuleMB and AuditMB say by how much. A rule that gives no size (a CSV
// without its Bytes column: every size 0, sized false) is not held to them.
func (rc *RuleComparison) sizes(sized bool, ruleMB float64, auditBytes int64) {
	auditMB := float64(auditBytes) / 1e6
	if !sized || math.Abs(ruleMB-auditMB) <= 0.0005*float64(rc.Both)+1e-9*math.Abs(auditMB) {
		return
	}
	rc.Agree, rc.RuleMB, rc.AuditMB = false, ruleMB, auditMB
}

// RuleUnavailable records that the rule's output could not be had, and why.
func (au *Audit) RuleUnavailable(rule, note string) {
	au.NVIDIA = &RuleComparison{Rule: rule, Note: note, AuditCount: int(au.rule.n),
		OnlyRule: []Flagged{}, OnlyAudit: []Evidence{}}
}

// ruleDigest sums the pageable async copies of a capture as the rule's
// comparison takes them: how many, and two sums of a hash of each one's
// process and GPU start, the same whatever their order. Two lists of
// copies with one digest hold the same copies but with a chance of about
// one in 2^64 for lists that differ.
type ruleDigest struct {
	n, sum, mix uint64
}

func (d *ruleDigest) add(pid, start int64) {
	d.n++
	d.sum += splitmix(uint64(pid)*0x9e3779b97f4a7c15 ^ uint64(start))
	d.mix += splitmix(uint64(start)*0xbf58476d1ce4e5b9 ^ uint64(pid) ^ 0x94d049bb133111eb)
}

// sizeHash is the hash of one copy, its process, start and size in kB,
// that the sizes of the two sides sum: equal sums say each copy has one
// size on both sides, to the 1 kB the rule prints a size to.
func sizeHash(pid, start, kB int64) uint64 {
	return splitmix(splitmix(uint64(pid)*0x9e3779b97f4a7c15^uint64(start)) ^ uint64(kB)*0xd6e8feb86659fd93)
}

// kBOfMB is a size the rule gives (MB, printed to 1 kB) in whole kB;
// kBOfBytes a record's size in bytes, rounded to the kB the same way.
func kBOfMB(mb float64) int64     { return int64(math.Round(mb * 1000)) }
func kBOfBytes(bytes int64) int64 { return int64(math.Round(float64(bytes) / 1000)) }

// sameSize says whether the rule's size of a copy (MB, to 1 kB) is the
// records' (bytes): within the half kB its printing rounds off.
func sameSize(mb float64, bytes int64) bool {
	return math.Abs(mb*1e6-float64(bytes)) <= 500+1e-9*float64(bytes)
}

// splitmix is SplitMix64's finalizer: every bit of x moves about half the
// bits of the result.
func splitmix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// ruleList matches the pageable async copies of a capture, streamed a
// second time, with the rule's rows when the two sides' digests differ:
// the rows (in the rule's order), their order by process and start, which
// ones a copy matched, how many did, and the earliest copies no row
// matched.
type ruleList struct {
	rows  []Flagged
	order []int32
	seen  []bool
	both  int
	only  earliest
	// sized says the rule gives sizes; sizes counts the copies both list
	// whose sizes differ, by the rule's size and the records' (in kB).
	sized bool
	sizes map[[2]int64]int64
}

func (l *ruleList) index() {
	l.order = make([]int32, len(l.rows))
	for i := range l.order {
		l.order[i] = int32(i)
	}
	sort.SliceStable(l.order, func(x, y int) bool {
		a, b := l.rows[l.order[x]], l.rows[l.order[y]]
		return a.PID < b.PID || a.PID == b.PID && a.Start < b.Start
	})
	l.seen = make([]bool, len(l.rows))
}

// match sets one of the audit's copies beside the rule's rows: the first
// row of its process and start that no copy has matched yet, of its size
// where one is; a matched row of another size is counted in sizes.
func (l *ruleList) match(c *copyCall) {
	i := sort.Search(len(l.order), func(k int) bool {
		r := l.rows[l.order[k]]
		return r.PID > c.PID || r.PID == c.PID && r.Start >= c.Start
	})
	free := -1
	for ; i < len(l.order); i++ {
		r := l.rows[l.order[i]]
		if r.PID != c.PID || r.Start != c.Start {
			break
		}
		if l.seen[l.order[i]] {
			continue
		}
		if free < 0 {
			free = i
		}
		if !l.sized || sameSize(r.MB, c.Bytes) {
			free = i
			break
		}
	}
	if free < 0 {
		l.only.add(evidenceOf(c))
		return
	}
	r := l.rows[l.order[free]]
	l.seen[l.order[free]] = true
	l.both++
	if l.sized && !sameSize(r.MB, c.Bytes) {
		l.sizes[[2]int64{kBOfMB(r.MB), kBOfBytes(c.Bytes)}]++
	}
}

// sizeDiffs are the copies whose sizes differ, counted, and the sizes
// that do, most copies first (of as many, the rule's smaller size first),
// at most MaxEvidence.
func (l *ruleList) sizeDiffs() (int64, []SizeDiff) {
	var n int64
	var out []SizeDiff
	for k, c := range l.sizes {
		n += c
		out = append(out, SizeDiff{RuleMB: float64(k[0]) / 1000, AuditMB: float64(k[1]) / 1000, Copies: c})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Copies != b.Copies {
			return a.Copies > b.Copies
		}
		if a.RuleMB != b.RuleMB {
			return a.RuleMB < b.RuleMB
		}
		return a.AuditMB < b.AuditMB
	})
	return n, out[:min(len(out), MaxEvidence)]
}

// earliest keeps the MaxEvidence copies that started first on the GPU: a
// max-heap by start, the latest on top.
type earliest []Evidence

func (h *earliest) add(e Evidence) {
	q := *h
	if len(q) == MaxEvidence {
		if e.GPUStart >= q[0].GPUStart {
			return
		}
		q[0] = e
		for i := 0; ; {
			l, r, m := 2*i+1, 2*i+2, i
			if l < len(q) && q[l].GPUStart > q[m].GPUStart {
				m = l
			}
			if r < len(q) && q[r].GPUStart > q[m].GPUStart {
				m = r
			}
			if m == i {
				break
			}
			q[i], q[m] = q[m], q[i]
			i = m
		}
		return
	}
	q = append(q, e)
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if q[p].GPUStart >= q[i].GPUStart {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
	*h = q
}

// sorted is the copies kept, earliest first.
func (h earliest) sorted() []Evidence {
	out := append([]Evidence{}, h...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].GPUStart < out[j].GPUStart })
	return out
}
