package audit

import (
	"fmt"
	"sort"
	"strings"
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
	rc := &RuleComparison{Rule: rule, Available: true, Source: source, RuleCount: len(flagged),
		AuditCount: len(au.pageableAsync), OnlyRule: []Flagged{}, OnlyAudit: []Evidence{}}
	seen := map[flagKey]bool{}
	for _, f := range flagged {
		k := flagKey{f.PID, f.Start}
		if _, ok := au.pageableAsync[k]; ok && !seen[k] {
			rc.Both++
			seen[k] = true
			continue
		}
		if len(rc.OnlyRule) < MaxEvidence {
			rc.OnlyRule = append(rc.OnlyRule, f)
		}
	}
	var only []Evidence
	for k, e := range au.pageableAsync {
		if !seen[k] {
			only = append(only, e)
		}
	}
	sort.Slice(only, func(i, j int) bool { return only[i].GPUStart < only[j].GPUStart })
	if len(only) > MaxEvidence {
		only = only[:MaxEvidence]
	}
	rc.OnlyAudit = append(rc.OnlyAudit, only...)
	rc.Agree = rc.Both == rc.RuleCount && rc.Both == rc.AuditCount
	au.NVIDIA = rc
	return rc
}

// RuleUnavailable records that the rule's output could not be had, and why.
func (au *Audit) RuleUnavailable(rule, note string) {
	au.NVIDIA = &RuleComparison{Rule: rule, Note: note, AuditCount: len(au.pageableAsync),
		OnlyRule: []Flagged{}, OnlyAudit: []Evidence{}}
}

// Summary is the comparison in one sentence.
func (rc *RuleComparison) Summary() string {
	if !rc.Available {
		return fmt.Sprintf("NVIDIA's %s rule: not compared: %s", rc.Rule, rc.Note)
	}
	if rc.Agree {
		return fmt.Sprintf("NVIDIA's %s rule (%s) agrees: it lists the same %s", rc.Rule, rc.Source, copies(rc.Both, "pageable async copy"))
	}
	return fmt.Sprintf("NVIDIA's %s rule (%s) disagrees: it lists %s, the audit %s, %d in both",
		rc.Rule, rc.Source, copies(rc.RuleCount, "copy"), copies(rc.AuditCount, "pageable async copy"), rc.Both)
}

// copies is a count of copies in words: "1 copy", "2 copies".
func copies(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %s", n, strings.TrimSuffix(noun, "y")+"ies")
}
