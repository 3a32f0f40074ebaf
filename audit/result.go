package audit

import (
	"sort"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/coverage"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/framework"
	"github.com/nsyscheck/nsyscheck/records"

	"github.com/nsyscheck/nsyscheck/vocab"
)

// Audit is the lesson's rule applied to one capture.
type Audit struct {
	Capture     string
	Format      string
	Files       []string
	GPU         string
	NsysVersion string

	// Framework is the framework the capture's program ran on, and the
	// clues it was told by.
	Framework framework.Detection
	// Regions are the capture's regions, the whole capture
	// (replay.CaptureRegion) first, then each NVTX range name: measured,
	// replayed as captured and predicted after pinning.
	Regions []Region
	// Gate is the --fail-above gate of a one-capture audit, nil without it.
	Gate *Gate

	// APICalls counts every CUDA runtime call of the capture; SpanNs is the
	// host time the capture covers: the trace's duration where the export
	// records it, else the first call's start to the last call's end
	// (SpanFrom says which).
	APICalls int64
	SpanNs   int64
	SpanFrom string
	// SessionStartNs is the wall-clock time the capture's session started
	// (ns since 1970, UTC) where the capture records it, 0 otherwise (a
	// CSV folder, an audit's JSON written before it carried one).
	SessionStartNs int64
	// SessionStartFault says why the start the capture records cannot be
	// a session's (0 ns, before 1970, a NULL, two starts): a damaged
	// export, whose rank cannot be told to be of its job's run or not;
	// "" where the capture records a real start or none at all.
	SessionStartFault string
	// Job names the job the capture's process ran in, where its
	// environment says: a scheduler's variable and a digest of its value
	// (nsysdb.JobOf), which the ranks of one run share; "" otherwise.
	Job string

	Copies    int64
	Unmatched int64
	Memsets   int64

	// Totals sum the copies by direction, host memory kind and API kind.
	Totals []Total
	// Classes are every class of copies, by host time held, longest first.
	Classes []*Class
	// TopOffenders are the classes of pageable or unknown host memory that
	// held the host longest (at most MaxTop).
	TopOffenders []*Class

	// CallSites are the pageable copies by the place in the program that
	// made them, where the capture holds call stacks.
	CallSites *CallSites

	Findings   []Finding
	Prediction *Prediction
	// Replay says how the what-if pinned the copies: the way to pin, the
	// costs and what it assumed.
	Replay *Replay
	// PinAllocs are the calls that allocated or registered pinned memory.
	PinAllocs PinAllocs
	// NVIDIA compares the pageable async copies with NVIDIA's
	// cuda_memcpy_async rule; nil until Compare is called.
	NVIDIA *RuleComparison
	// Link is where the link rate the replay's costs may use came from
	// (FromLink names it in the costs); nil for an audit read back from
	// JSON, whose costs name it in words.
	Link *LinkOrigin

	Missing []records.Gap
	// Coverage is what the capture can and cannot show (Cover): what nsys
	// traced, what it says it lost, graph launches and migrations; nil
	// until Cover is called.
	Coverage *coverage.Coverage
	// Diagnostics are what the audit says about its input beside the
	// findings, in verify's codes (check.CodeInputSubstituted when the
	// SQLite export beside a .nsys-rep was read in its place). Their JSON
	// is made by report (report.AuditEnvelope) and read back, as notes, by
	// auditjson.ReadOutput.
	Diagnostics []diag.Diagnostic
	// Exposures say what the capture files reveal beyond the run (other
	// processes, environment outside the allowlist, secrets), as verify's
	// capture-exposes warnings do; empty when they reveal nothing. In JSON
	// as Diagnostics.
	Exposures []diag.Diagnostic

	// rule is the digest of the pageable async copies, for the rule's
	// comparison (CompareRule).
	rule ruleDigest
	// ruleBytes sums the bytes of those copies, ruleSizes a hash of each
	// one's process, start and size (Accumulator.ruleSizes).
	ruleBytes int64
	ruleSizes uint64
	// kernels counts the kernel launches by name: with the bytes moved,
	// what tells two captures of one program (SameProgram).
	kernels map[string]int64
}

// MaxTop bounds the top offenders listed.
const MaxTop = 5

// Finish turns what was summed into an Audit, with the regions, the costs
// and the framework of the capture's replay: each class's share of its
// region, and the host time its copy calls are predicted to hold after
// pinning on the replay's costs. Without a replay (r.Result nil) the audit
// has its classes and findings alone: no region and no prediction.
func (a *Accumulator) Finish(scan *capture.CopyScan, r Replayed) *Audit {
	au := &Audit{Capture: scan.Path, Format: string(scan.Format), Files: scan.Files,
		GPU: scan.Meta.GPU, NsysVersion: scan.Meta.NsysVersion, APICalls: scan.APICalls,
		SpanNs: scan.Span, SpanFrom: scan.SpanFrom, Copies: scan.Copies, Unmatched: scan.Unmatched, Memsets: scan.Memsets,
		SessionStartNs: a.sessionStart, SessionStartFault: a.sessionFault, Job: a.job,
		Missing: scan.Missing, rule: a.rule, ruleBytes: a.ruleBytes, ruleSizes: a.ruleSizes, Classes: []*Class{}, TopOffenders: []*Class{},
		Exposures: []diag.Diagnostic{}, CallSites: a.sites.finish()}
	for _, c := range a.classes {
		if c.GPUNs > 0 {
			c.GPUGBps = float64(c.Bytes) / float64(c.GPUNs)
		}
		if c.HostNs > 0 {
			c.HostGBps = float64(c.Bytes) / float64(c.HostNs)
		}
		au.Classes = append(au.Classes, c)
	}
	sortClasses(au.Classes)
	for _, c := range au.Classes {
		if len(au.TopOffenders) < MaxTop && (c.HostMemory == Pageable || c.HostMemory == UnknownHost) && c.HostNs > 0 {
			au.TopOffenders = append(au.TopOffenders, c)
		}
	}
	au.Totals = []Total{}
	for _, t := range a.totals {
		au.Totals = append(au.Totals, *t)
	}
	sort.Slice(au.Totals, func(i, j int) bool {
		x, y := au.Totals[i], au.Totals[j]
		if x.Direction != y.Direction {
			return x.Direction < y.Direction
		}
		if x.HostMemory != y.HostMemory {
			return x.HostMemory < y.HostMemory
		}
		return x.APIKind < y.APIKind
	})
	au.Findings = []Finding{a.sync, a.noOver}
	au.Regions = []Region{}
	if r.Result != nil {
		au.setReplay(r)
		au.Prediction = predict(au, r.Result.Costs)
	}
	return au
}

// Sum adds up the totals that match: an empty direction, host memory kind
// or API kind matches every one.
func (au *Audit) Sum(dir vocab.CopyKind, host HostMemory, kind APIKind) Total {
	out := Total{Direction: dir, HostMemory: host, APIKind: kind}
	for _, t := range au.Totals {
		if (dir == "" || t.Direction == dir) && (host == "" || t.HostMemory == host) && (kind == "" || t.APIKind == kind) {
			out.Count += t.Count
			out.Bytes += t.Bytes
			out.HostNs += t.HostNs
			out.GPUNs += t.GPUNs
		}
	}
	return out
}

// Finding returns the finding with the given id, nil if none.
func (au *Audit) Finding(id string) *Finding {
	for i := range au.Findings {
		if au.Findings[i].ID == id {
			return &au.Findings[i]
		}
	}
	return nil
}

// Output is the whole of `audit`'s answer: the audit of one capture, or of
// two and the check of the second against the first. Its JSON is the
// envelope (report.AuditEnvelope, through auditjson's transfer types).
type Output struct {
	Before *Audit
	After  *Audit
	Check  *Check
}

// Passed reports whether the answer is a pass: with a capture after the
// fix, the check held; with one capture, Answer is AnswerPass.
func (o *Output) Passed() bool {
	if o.Check != nil {
		return o.Check.Verdict == Held
	}
	return o.Answer() == AnswerPass
}

// One capture's answers (Output.Answer).
const (
	AnswerPass        = "pass"
	AnswerFail        = "fail"
	AnswerUnavailable = string(Unavailable)
)

// Answer is the audit's verdict as every format says it: with a capture
// after the fix, the check's; with one capture and a gate (--fail-above),
// fail where a judged region's pageable copy calls held the host above its
// limit; with one capture and none, fail where a copy breaks the rule. A
// pass of a capture that may lack copies the run made (Audit.Hidden) is
// unavailable: what it lacks might break the rule or the gate.
func (o *Output) Answer() string {
	if o.Check != nil {
		return string(o.Check.Verdict)
	}
	answer := AnswerPass
	if g := o.Before.Gate; g != nil {
		if !g.Passed() {
			answer = AnswerFail
		}
	} else {
		for _, f := range o.Before.Findings {
			if f.Count > 0 {
				answer = AnswerFail
			}
		}
	}
	if answer == AnswerPass && len(o.Before.Hidden()) > 0 {
		answer = AnswerUnavailable
	}
	return answer
}
