package audit

import (
	"sort"

	"github.com/nsyscheck/nsyscheck/vocab"
)

// Flagged is one copy NVIDIA's cuda_memcpy_async rule lists: the process
// and the copy's start and duration on the GPU.
type Flagged struct {
	PID      int64   `json:"pid"`
	Start    int64   `json:"start"`
	Duration int64   `json:"duration"`
	MB       float64 `json:"mb"`
}

// RuleComparison sets the audit's pageable async copies beside the ones
// NVIDIA's cuda_memcpy_async rule lists.
type RuleComparison struct {
	Rule      string `json:"rule"`
	Available bool   `json:"available"`
	// Source says how the rule's output was had ("nsys analyze", or the CSV
	// file beside the capture); Note why it was not, when it was not.
	Source string `json:"source,omitempty"`
	Note   string `json:"note,omitempty"`

	RuleCount  int  `json:"ruleCount"`  // copies the rule lists
	AuditCount int  `json:"auditCount"` // pageable async copies the audit found
	Both       int  `json:"both"`
	Agree      bool `json:"agree"`
	// OnlyRule and OnlyAudit list (at most MaxEvidence of) the copies one
	// side has and the other has not.
	OnlyRule  []Flagged  `json:"onlyRule"`
	OnlyAudit []Evidence `json:"onlyAudit"`
}

// CompareRule matches the rule's copies with the audit's pageable async
// copies by process and GPU start time, and records the result in au.NVIDIA.
func (au *Audit) CompareRule(rule, source string, flagged []Flagged) *RuleComparison {
	pa := &au.pageableAsync
	rc := &RuleComparison{Rule: rule, Available: true, Source: source, RuleCount: len(flagged),
		AuditCount: pa.len(), OnlyRule: []Flagged{}, OnlyAudit: []Evidence{}}
	seen := make([]bool, pa.len())
	for _, f := range flagged {
		if i, ok := pa.find(f.PID, f.Start); ok && !seen[i] {
			rc.Both++
			seen[i] = true
			continue
		}
		if len(rc.OnlyRule) < MaxEvidence {
			rc.OnlyRule = append(rc.OnlyRule, f)
		}
	}
	var only []int
	for i := range seen {
		if !seen[i] {
			only = append(only, i)
		}
	}
	sort.SliceStable(only, func(x, y int) bool { return pa.copies[only[x]].start < pa.copies[only[y]].start })
	for _, i := range only[:min(len(only), MaxEvidence)] {
		rc.OnlyAudit = append(rc.OnlyAudit, pa.evidence(i))
	}
	rc.Agree = rc.Both == rc.RuleCount && rc.Both == rc.AuditCount
	au.NVIDIA = rc
	return rc
}

// RuleUnavailable records that the rule's output could not be had, and why.
func (au *Audit) RuleUnavailable(rule, note string) {
	au.NVIDIA = &RuleComparison{Rule: rule, Note: note, AuditCount: au.pageableAsync.len(),
		OnlyRule: []Flagged{}, OnlyAudit: []Evidence{}}
}

// asyncCopies are the pageable async copies of a capture as the rule's
// comparison keeps them: enough to find one by process and GPU start and
// to give it as evidence, the names interned.
type asyncCopies struct {
	copies []asyncCopy
	names  []string
	at     map[string]uint32
}

type asyncCopy struct {
	pid, start, end    int64
	corr, tid          int64
	callStart, callEnd int64
	bytes              int64
	api, rng, dir      uint32 // into names
}

func (a *asyncCopies) name(s string) uint32 {
	if i, ok := a.at[s]; ok {
		return i
	}
	if a.at == nil {
		a.at = map[string]uint32{}
	}
	i := uint32(len(a.names))
	a.names = append(a.names, s)
	a.at[s] = i
	return i
}

func (a *asyncCopies) add(c *copyCall) {
	a.copies = append(a.copies, asyncCopy{pid: c.PID, start: c.Start, end: c.End, corr: c.CorrelationID, tid: c.TID,
		callStart: c.CallStart, callEnd: c.CallEnd, bytes: c.Bytes, api: a.name(c.API), rng: a.name(c.Range), dir: a.name(string(c.Kind))})
}

// sorted orders the copies by process and GPU start, keeping the last
// added of copies that share both (as NVIDIA's rule lists one).
func (a asyncCopies) sorted() asyncCopies {
	cs := a.copies
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].pid != cs[j].pid {
			return cs[i].pid < cs[j].pid
		}
		return cs[i].start < cs[j].start
	})
	out := cs[:0]
	for i, c := range cs {
		if i+1 < len(cs) && cs[i+1].pid == c.pid && cs[i+1].start == c.start {
			continue
		}
		out = append(out, c)
	}
	a.copies = out
	return a
}

func (a *asyncCopies) len() int { return len(a.copies) }

// find returns the index of the copy of process pid starting at start.
func (a *asyncCopies) find(pid, start int64) (int, bool) {
	cs := a.copies
	i := sort.Search(len(cs), func(i int) bool { return cs[i].pid > pid || cs[i].pid == pid && cs[i].start >= start })
	return i, i < len(cs) && cs[i].pid == pid && cs[i].start == start
}

// evidence is copy i as a finding's evidence.
func (a *asyncCopies) evidence(i int) Evidence {
	c := a.copies[i]
	return evidenceOf(&copyCall{API: a.names[c.api], CallStart: c.callStart, CallEnd: c.callEnd, Kind: vocab.CopyKind(a.names[c.dir]),
		Src: vocab.MemPageable, Dst: vocab.MemPageable, Bytes: c.bytes, Start: c.start, End: c.end, CorrelationID: c.corr,
		PID: c.pid, TID: c.tid, Range: a.names[c.rng]})
}
