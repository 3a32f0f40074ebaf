// Package auditjson is the audit's JSON: transfer types that mirror the
// audit's result (audit.Audit, audit.Check and the replay, timeline,
// coverage and framework values they hold) field by field, built from
// the result (FromAudit, FromCheck) and read back into it (ReadOutput,
// ReadRanks). The result's own types carry no JSON tags; the JSON's
// shape is this package's and docs/output.schema.json's. The words the
// JSON holds (the findings' titles and rules, the diagnostics and
// exposures) are report's: it fills them in.
package auditjson

import (
	"fmt"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/replay"
)

// FromAudit is an audit's JSON, without its words: the regions, findings
// and exposures empty, never null, where the audit has none.
func FromAudit(au *audit.Audit) Audit {
	j := fromAudit(*au)
	if j.Regions == nil {
		j.Regions = []Region{}
	}
	if j.Findings == nil {
		j.Findings = []Finding{}
	}
	j.Exposures = []string{}
	return j
}

// FromCheck is a check's JSON, nil for none: its regions empty, never
// null, where it has none.
func FromCheck(c *audit.Check) *Check {
	if c == nil {
		return nil
	}
	j := fromCheck(*c)
	if j.Regions == nil {
		j.Regions = []RegionCheck{}
	}
	return &j
}

// period is a region's period, nil where it has none: the replay gives
// one of two instances or more on one thread, zero otherwise.
func period(r replay.Region) *ReplayPeriod {
	if !hasPeriod(r) {
		return nil
	}
	p := fromReplayPeriod(r.Period)
	return &p
}

// hasPeriod says whether a region has a period.
func hasPeriod(r replay.Region) bool { return r.Period != replay.Period{} || r.Fit.Period != 0 }

// medianCI is the interval of a region's median, nil where it has none:
// the replay gives one of replay.CIInstances or more, zero otherwise.
func medianCI(r replay.Region) *ReplayCI {
	if r.MedianCI == (replay.CI{}) {
		return nil
	}
	ci := fromReplayCI(r.MedianCI)
	return &ci
}

// mapSlice converts each element, nil for nil.
func mapSlice[S, T any](in []S, f func(S) T) []T {
	if in == nil {
		return nil
	}
	out := make([]T, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

// mapPtr converts what p points to, nil for nil.
func mapPtr[S, T any](p *S, f func(S) T) *T {
	if p == nil {
		return nil
	}
	v := f(*p)
	return &v
}

// mapMap converts each value, nil for nil.
func mapMap[K comparable, S, T any](in map[K]S, f func(S) T) map[K]T {
	if in == nil {
		return nil
	}
	out := make(map[K]T, len(in))
	for k, v := range in {
		out[k] = f(v)
	}
	return out
}

// deref is what p points to, zero for nil.
func deref[T any](p *T) T {
	var v T
	if p != nil {
		v = *p
	}
	return v
}

// PinChooser is who chose the way to pin (audit.PinChooser), spelt as
// the schema has it: "framework", "--pin-by" for the user's flag, or
// "after" for the capture after the fix.
type PinChooser audit.PinChooser

// pinChoosers spell each chooser.
var pinChoosers = map[PinChooser]string{
	PinChooser(audit.PinByFramework): "framework",
	PinChooser(audit.PinByFlag):      "--pin-by",
	PinChooser(audit.PinByAfter):     "after",
}

// MarshalText spells the chooser.
func (c PinChooser) MarshalText() ([]byte, error) {
	return spell(pinChoosers, c, "the way to pin's chooser")
}

// UnmarshalText reads a chooser's spelling, refusing one the schema does
// not have.
func (c *PinChooser) UnmarshalText(b []byte) error {
	return readSpelling(pinChoosers, b, c, "pinByFrom", `"framework", "--pin-by" or "after"`)
}

// spell is v's spelling in spellings, an error naming what v is where it
// has none.
func spell[T comparable](spellings map[T]string, v T, what string) ([]byte, error) {
	if s, ok := spellings[v]; ok {
		return []byte(s), nil
	}
	return nil, fmt.Errorf("no spelling for %s %v", what, v)
}

// readSpelling sets *v to the value spellings spells b, refusing a
// spelling it does not have with the field's name and the spellings
// wanted.
func readSpelling[T comparable](spellings map[T]string, b []byte, v *T, field, want string) error {
	for k, s := range spellings {
		if s == string(b) {
			*v = k
			return nil
		}
	}
	return fmt.Errorf("%s %q: want %s", field, b, want)
}

// RuleSourceKind is how NVIDIA's rule's copies were had
// (audit.RuleSourceKind), spelt as the schema has it: "nsys-analyze", "csv"
// for the rule's CSV beside the capture, or "scan" for the rule's
// definition applied to the audit's own records.
type RuleSourceKind audit.RuleSourceKind

// ruleSourceKinds spell each kind a JSON names.
var ruleSourceKinds = map[RuleSourceKind]string{
	RuleSourceKind(audit.RuleSourceAnalyze): "nsys-analyze",
	RuleSourceKind(audit.RuleSourceCSV):     "csv",
	RuleSourceKind(audit.RuleSourceScan):    "scan",
}

// MarshalText spells the kind.
func (k RuleSourceKind) MarshalText() ([]byte, error) {
	return spell(ruleSourceKinds, k, "the rule's source kind")
}

// UnmarshalText reads a kind's spelling, refusing one the schema does not
// have.
func (k *RuleSourceKind) UnmarshalText(b []byte) error {
	return readSpelling(ruleSourceKinds, b, k, "sourceKind", `"nsys-analyze", "csv" or "scan"`)
}

// sourceKindOf is the kind of a source as the JSON names it: none for a
// source read back from a JSON that named none.
func sourceKindOf(k audit.RuleSourceKind) RuleSourceKind {
	if _, ok := ruleSourceKinds[RuleSourceKind(k)]; !ok {
		return RuleSourceKind(audit.RuleSourceNone)
	}
	return RuleSourceKind(k)
}

// ruleSourceRead is the rule's source read back: its kind where the JSON
// names one (an earlier JSON names none), and its words, as written.
func ruleSourceRead(kind RuleSourceKind, words string) audit.RuleSource {
	if words == "" && kind == RuleSourceKind(audit.RuleSourceNone) {
		return audit.RuleSource{}
	}
	k := audit.RuleSourceKind(kind)
	if k == audit.RuleSourceNone {
		k = audit.RuleSourceRead
	}
	return audit.RuleSource{Kind: k, Text: words}
}
