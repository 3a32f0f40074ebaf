package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/coverage"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/framework"
	"github.com/nsyscheck/nsyscheck/internal/ctlchar"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/internal/words"
	"github.com/nsyscheck/nsyscheck/nsysrule"
	"github.com/nsyscheck/nsyscheck/replay"
	"github.com/nsyscheck/nsyscheck/timeline"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// auditView is what every audit renderer prints, the answer first: the
// regions (or the check of them), what to change, then each capture's
// classes, findings and evidence. Plain strings, escaped by each renderer
// for its own format.
type auditView struct {
	Title string
	About []string
	// Verdict is the check's verdict, or for one capture pass or fail (the
	// rule, or the --fail-above gate).
	Verdict string
	// Answer is the verdict in one sentence.
	Answer string
	// Limits are what each capture cannot show (package coverage), said
	// beside the answer, the classes and the findings they touch.
	Limits []limitView
	// Regions is the region table: each region now and pinned (one
	// capture), or before, predicted and after with its verdict (check).
	Regions tableView
	// Shares is the regions' copies: overlap and the copy calls' share.
	Shares tableView
	// Notes explain each region's verdict, then what the check adds.
	Notes []string
	// Advice is what to change, in the framework's words.
	Advice adviceView
	// Audits are each capture's details.
	Audits []auditDetail
}

// adviceView is what to change in the program.
type adviceView struct {
	Framework string
	// Classes are the offending classes, each with its fix.
	Classes []adviceClass
	// None says there is nothing to pin, "" when there is.
	None string
	// Sites are where the program makes its pageable copies, from the
	// capture's call stacks; nil where it has none.
	Sites *tableView
	// Line says how far the sites go, or how to profile for them.
	Line string
}

// adviceClass is the offending classes one fix serves.
type adviceClass struct {
	Classes []string
	Fix     []string
}

// auditDetail is one capture's details.
type auditDetail struct {
	Title string
	About []string
	// Totals are the copies by direction, host memory and API kind;
	// Classes every class (or the first AuditMaxClassRows, with More
	// counting the rest).
	Totals  tableView
	Classes tableView
	More    int
	// Offenders are the top offenders in words.
	Offenders []string
	Findings  []findingView
	// Prediction and Replay say what pinning should save and how the
	// replay costed it.
	Prediction []string
	Replay     []string
	Rule       []string
	Notes      []diagView
}

type findingView struct {
	Head     string
	Rule     string
	Lead     string // how the evidence is chosen
	Evidence []string
	More     int // evidence copies not shown
}

// auditMs formats milliseconds to four figures or so.
func auditMs(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1000:
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		return fmt.Sprintf("%.1f", v)
	case a >= 10:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3f", v)
}

// msWords is milliseconds with the unit.
func msWords(v float64) string { return auditMs(v) + " ms" }

// boundWords is a bound in ms.
func boundWords(lo, hi float64) string { return auditMs(lo) + "-" + auditMs(hi) }

// pctSigned formats a relative change.
func pctSigned(v float64) string { return fmt.Sprintf("%+.1f%%", 100*v) }

// frameworkWords names a framework.
var frameworkWords = map[framework.Name]string{
	framework.JAX: "JAX (XLA)", framework.PyTorch: "PyTorch", framework.CuPy: "CuPy",
	framework.Driver: "the CUDA driver API", framework.Runtime: "the CUDA runtime", framework.Unknown: "no framework told",
}

// clueWords says what told the framework: its strongest clue.
func clueWords(d framework.Detection) string {
	if len(d.Clues) == 0 {
		return ""
	}
	c := d.Clues[0]
	switch c.Kind {
	case framework.ClueThread:
		return fmt.Sprintf("thread %s, %s", c.Name, nounsOf(c.Count, "call"))
	case framework.ClueKernel:
		return fmt.Sprintf("kernel %s, %s", c.Name, nounsOf(c.Count, "launch"))
	case framework.ClueDomain:
		return fmt.Sprintf("NVTX domain %s, %s", c.Name, nounsOf(c.Count, "range"))
	}
	return fmt.Sprintf("%s, %s", c.Name, nounsOf(c.Count, "copy call"))
}

// nounsOf is a count with its noun (counted), the plural made by the
// noun's ending: "1 copy", "3 copies", "2 launches", "4 calls".
func nounsOf(n int64, noun string) string {
	many := noun + "s"
	switch {
	case strings.HasSuffix(noun, "y"):
		many = strings.TrimSuffix(noun, "y") + "ies"
	case strings.HasSuffix(noun, "ch"):
		many = noun + "es"
	}
	return counted(int(n), noun, many)
}

// aboutAudit is the line naming an audit's capture.
func aboutAudit(au *audit.Audit) string {
	// One line's names: a newline in the path (or an edited export's GPU
	// name) would read, once wrapped, as a space the name does not hold.
	s := ctlchar.Line(au.Capture) + " (" + formatName(au.Format) + ")"
	if au.GPU != "" {
		s += ", " + ctlchar.Line(au.GPU)
	}
	fw := frameworkWords[au.Framework.Framework]
	if fw == "" {
		fw = string(au.Framework.Framework)
	}
	if fw != "" {
		s += "; " + fw
		if c := clueWords(au.Framework); c != "" {
			s += " (" + c + ")"
		}
	}
	return s
}

func formatName(f string) string {
	if w := formatWords[f]; w != "" {
		return w
	}
	return f
}

// noRegion says why a capture has no region.
const noRegion = "none: the capture has no host-device copy call, no launch and no NVTX range"

// buildAuditView puts an audit (and its check) into words.
func buildAuditView(out *audit.Output, verbose bool) *auditView {
	v := &auditView{}
	if out.Check != nil {
		checkView(v, out, verbose)
	} else {
		oneView(v, out.Before, verbose)
		v.Verdict = out.Answer()
	}
	v.Advice = adviceOf(out.Before)
	for _, au := range []*audit.Audit{out.Before, out.After} {
		if au != nil {
			v.Audits = append(v.Audits, detailOf(au, verbose))
		}
	}
	v.Limits = limitsOf(out)
	return v
}

// limitView is one thing a capture cannot show, and which capture of a
// check says it.
type limitView struct {
	diagView
	// Of is the capture that says it: "" for a one-capture audit, else
	// "before", "after", or "before and after" when both do.
	Of string
}

// Said is the limit's words, naming the capture that says it.
func (l limitView) Said() string {
	if l.Of == "" {
		return l.Full()
	}
	return l.Of + ": " + l.Full()
}

// limitsOf words what each capture of the output cannot show, naming the
// capture where there are two ("before and after" for what both say).
func limitsOf(out *audit.Output) []limitView {
	var limits []limitView
	of := map[string]int{} // index in limits by level, code and message
	for i, au := range []*audit.Audit{out.Before, out.After} {
		if au == nil {
			continue
		}
		for _, d := range diagViews(au.Diagnostics) {
			if !coverage.IsCode(d.Code) {
				continue
			}
			key := string(d.Level) + " " + string(d.Code) + " " + d.Full()
			if k, ok := of[key]; ok {
				limits[k].Of = "before and after"
				continue
			}
			of[key] = len(limits)
			l := limitView{diagView: d}
			if out.After != nil {
				l.Of = []string{"before", "after"}[i]
			}
			limits = append(limits, l)
		}
	}
	return limits
}

// oneView is the answer of a one-capture audit: its regions now and
// predicted with their copies pinned.
func oneView(v *auditView, au *audit.Audit, verbose bool) {
	v.Title = "Audit of " + ctlchar.Line(au.Capture)
	v.About = []string{aboutAudit(au)}
	v.Regions = tableView{Title: "Regions (ms): now, the replay's fit, and predicted with the copies pinned",
		Head:  []string{"region", "n", "time", "now", "fit", "pinned", "bound"},
		Right: []bool{false, true, false, true, true, true, false}, Missing: noRegion}
	judged := map[string]bool{}
	for _, r := range au.Judged() {
		judged[r.Name] = true
	}
	shown, left := shownRegions(au.Regions, func(i int) bool { return judged[au.Regions[i].Name] }, verbose)
	var regions []audit.Region
	for _, i := range shown {
		r := au.Regions[i]
		mid, lo, hi := r.Predicted()
		pinned, bound := auditMs(mid), boundWords(lo, hi)
		if r.NotPredicted != nil {
			pinned, bound = "-", "not predicted"
		}
		v.Regions.Rows = append(v.Regions.Rows, []string{r.Name, fmt.Sprint(r.Instances), string(r.Measure), auditMs(r.Time()),
			pctSigned(r.FitError()), pinned, bound})
		regions = append(regions, r)
	}
	v.Regions.Note = regionsNote(left, au, nil)
	v.Shares = sharesTable(regions, nil)
	findings := int64(0)
	for _, f := range au.Findings {
		findings += f.Count
	}
	switch g := au.Gate; {
	case g != nil && g.Passed():
		v.Verdict = "pass"
		v.Answer = fmt.Sprintf("--fail-above %s: passes: copies from pageable memory hold the host for at most %s of a region's median instance (the most: %s, %s)",
			pctPlain(g.Limit), pctPlain(g.Limit), g.Worst.Name, pctPlain(g.Worst.Share))
	case g != nil:
		var over []string
		for _, o := range g.Over {
			over = append(over, fmt.Sprintf("%s %s", o.Name, pctPlain(o.Share)))
		}
		v.Verdict = "fail"
		v.Answer = fmt.Sprintf("--fail-above %s: fails: copies from pageable memory hold the host for more than %s of the median instance of %s",
			pctPlain(g.Limit), pctPlain(g.Limit), words.List(over))
	case findings > 0:
		v.Verdict = "fail"
		verb, them := "break", "them"
		if findings == 1 {
			verb, them = "breaks", "it"
		}
		v.Answer = fmt.Sprintf("%s %s the lesson's rule (pin the buffers that feed cudaMemcpyAsync)", nounsOf(findings, "copy"), verb) + gainWords(au, them)
	default:
		v.Verdict = "pass"
		v.Answer = "no copy breaks the lesson's rule"
	}
	if hidden := au.Hidden(); len(hidden) > 0 {
		// What the capture lacks might break the rule or the gate
		// (audit.Output.Answer).
		if v.Verdict == audit.AnswerPass {
			v.Answer = "unavailable: " + v.Answer + ", as far as the capture shows: " + hiddenWords(hidden)
		} else {
			v.Answer += "; " + hiddenWords(hidden)
		}
	}
	for _, r := range au.Judged() {
		mid, lo, hi := r.Predicted()
		if r.Time() <= 0 {
			continue
		}
		if r.NotPredicted != nil {
			v.Notes = append(v.Notes, fmt.Sprintf("%s: %s now (%s), %s: its copy calls hold the host %s of it now, %s from pageable memory",
				r.Name, msWords(r.Time()), measureWords(r.Measure, r.Instances), notPredictedWords(r.NotPredicted),
				pctPlain(r.HostShare.Measured), pctPlain(r.PageableShare)))
			continue
		}
		note := fmt.Sprintf("%s: %s now (%s), %s predicted with its copies pinned (bound %s ms, %s): its copy calls hold the host %s of it now, %s from pageable memory",
			r.Name, msWords(r.Time()), measureWords(r.Measure, r.Instances), msWords(mid), boundWords(lo, hi), pctSigned(mid/r.Time()-1),
			pctPlain(r.HostShare.Measured), pctPlain(r.PageableShare))
		if r.Unresolved != nil {
			note += "; the prediction is a guess: " + unresolvedRegionWords(r.Unresolved)
		}
		v.Notes = append(v.Notes, note)
	}
	v.Notes = append(v.Notes, replayNote(au))
}

// AuditMaxRegionRows bounds the regions the text (without Verbose),
// Markdown and HTML list: the whole capture and the judged regions first,
// then the others in order; the JSON has them all.
const AuditMaxRegionRows = 12

// shownRegions picks the indexes of the regions to list: all with verbose,
// else the whole capture and the judged ones first (up to
// AuditMaxRegionRows), then the rest as room allows, in their order; and
// how many are left out.
func shownRegions(rs []audit.Region, judged func(int) bool, verbose bool) (shown []int, left int) {
	if verbose || len(rs) <= AuditMaxRegionRows {
		for i := range rs {
			shown = append(shown, i)
		}
		return shown, 0
	}
	take := map[int]bool{}
	for i, r := range rs {
		if len(take) < AuditMaxRegionRows && (r.Name == replay.CaptureRegion || judged(i)) {
			take[i] = true
		}
	}
	for i := range rs {
		if len(take) < AuditMaxRegionRows {
			take[i] = true
		}
	}
	for i := range rs {
		if take[i] {
			shown = append(shown, i)
		}
	}
	return shown, len(rs) - len(shown)
}

// regionsNote says what the region table leaves out: regions past the
// first few (left of them), and the NVTX ranges that are no region
// because an instance never closed, in before and, for a check, after.
func regionsNote(left int, before, after *audit.Audit) string {
	var parts []string
	if left > 0 {
		parts = append(parts, leftOut(left))
	}
	b, a := openRanges(before), openRanges(after)
	const never = "never closed before the capture ended"
	switch {
	case after == nil || slices.Equal(a, b):
		if len(b) > 0 {
			parts = append(parts, fmt.Sprintf("not a region: %s, %s", words.List(b), never))
		}
	default:
		for i, names := range [][]string{b, a} {
			if len(names) > 0 {
				parts = append(parts, fmt.Sprintf("not a region %s: %s, %s", []string{"before", "after"}[i], words.List(names), never))
			}
		}
	}
	return strings.Join(parts, "; ")
}

// openRanges names the NVTX ranges the replay left out of au's regions
// because an instance never closed before the capture ended.
func openRanges(au *audit.Audit) []string {
	if au == nil || au.Replay == nil {
		return nil
	}
	var names []string
	for _, a := range au.Replay.Assumptions {
		if a.Kind == timeline.AssumeOpenRange && !slices.Contains(names, a.API) {
			names = append(names, a.API)
		}
	}
	return names
}

// leftOut is the line that counts the regions not listed.
func leftOut(n int) string {
	return fmt.Sprintf("%d more %s not shown: -v lists every one, --format json holds them", n, map[bool]string{true: "region", false: "regions"}[n == 1])
}

// measureWords says which time of a region is meant.
func measureWords(m audit.Measure, n int) string {
	switch {
	case m == audit.MeasureSpan:
		return fmt.Sprintf("span of %d instances: most ran behind the host", n)
	case n == 1:
		return "its one instance"
	}
	return fmt.Sprintf("median of %d instances", n)
}

// sharesTable is the regions' copies: copy/compute overlap now and pinned
// (and after), and the copy calls' share of the region.
func sharesTable(rs []audit.Region, checks []audit.RegionCheck) tableView {
	t := tableView{Title: "Copies in each region: the share of copy GPU time a kernel overlapped, and the host time copy calls held (all, from pageable memory) as a share of an instance, the median over the instances",
		Head: []string{"region", "overlap", "pinned"}, Right: []bool{false, true, true, true, true}, Missing: noRegion}
	if checks != nil {
		t.Head = append(t.Head, "after")
	}
	t.Head = append(t.Head, "copy calls", "pageable")
	t.Right = append(t.Right, true)
	for i, r := range rs {
		row := []string{r.Name, fmt.Sprintf("%.2f", r.Overlap.Measured), fmt.Sprintf("%.2f", r.Overlap.Predicted)}
		if checks != nil {
			a := "-"
			if checks[i].AfterInstances > 0 {
				a = fmt.Sprintf("%.2f", checks[i].AfterOverlap)
			}
			row = append(row, a)
		}
		row = append(row, pctPlain(r.HostShare.Measured), pctPlain(r.PageableShare))
		t.Rows = append(t.Rows, row)
	}
	return t
}

// replayNote says how the what-if pinned the copies.
func replayNote(au *audit.Audit) string {
	rp := au.Replay
	if rp == nil {
		return ""
	}
	how := "buffers allocated pinned and reused"
	switch rp.PinBy {
	case replay.PinByCopy:
		how = "each buffer copied into pinned memory first, which the high bound pays on the host"
	case replay.PinByThread:
		how = "each batch copied into pinned memory by a pin thread of the program's interpreter, whose work every cost pays on the copying thread at its pageable calls' time"
	}
	from := "as " + frameworkWords[au.Framework.Framework] + " pins"
	if rp.PinBy == replay.PinByThread && au.Framework.LoaderWorkers > 0 {
		from = fmt.Sprintf("as a DataLoader whose workers make the batches pins with pin_memory=True: the capture lists %s named %s",
			counted(au.Framework.LoaderWorkers, "process", "processes"), framework.LoaderWorkerName)
	}
	// A DataLoader's workers show only in the process list, which CSV
	// reports do not carry.
	unseen := rp.PinByFrom == audit.PinByFramework && au.Framework.Framework == framework.PyTorch && au.Format == string(capture.FormatCSV)
	switch rp.PinByFrom {
	case audit.PinByFlag:
		from = "as --pin-by says"
	case audit.PinByAfter:
		from = "as the capture after shows: " + pinShownWords(rp.Shown)
	}
	if rp.Recosted+rp.Uncosted+rp.Kept == 0 {
		return "the capture has no copy from pageable memory for the what-if to pin: its prediction is the replay as captured"
	}
	s := fmt.Sprintf("the what-if pinned %s (%s, %s)", nounsOf(int64(rp.Recosted), "pageable copy"), how, from)
	if rp.Uncosted > 0 {
		s += fmt.Sprintf("; %s found no pinned cost and kept their times", nounsOf(int64(rp.Uncosted), "copy"))
	}
	if rp.Kept > 0 {
		s += fmt.Sprintf("; %s made by CUDA graphs were kept as measured", nounsOf(int64(rp.Kept), "copy"))
	}
	if unseen {
		s += "; CSV reports list no processes, so a DataLoader's workers cannot be seen: if its batches come from one, pass --pin-by pin-thread"
	}
	return s + "; " + costSourcesWords(au, rp.Costs)
}

// linkWords says where a link's rate came from.
func linkWords(o audit.LinkOrigin) string {
	switch o.Kind {
	case audit.LinkFlag:
		return "--link-gbps"
	case audit.LinkRun:
		return fmt.Sprintf("PCIe %d.0 x%d of %s, from %s", o.Gen, o.Width, o.GPU, o.File)
	}
	if o.Gen == 0 && o.Name != "" {
		return fmt.Sprintf("assumed %s, %.1f GB/s; pass --link-gbps or --rates to give the real link", o.Name, o.GBps)
	}
	return fmt.Sprintf("assumed PCIe %d.0 x%d, %.1f GB/s; pass --link-gbps or --rates to give the real link", o.Gen, o.Width, o.GBps)
}

// fromWords says where a cost of the audit came from: the link's origin in
// words where the cost names the link (audit.FromLink), else what it names
// (a run folder; or, read back from JSON, the words as written).
func fromWords(au *audit.Audit, from string) string {
	if from == audit.FromLink && au.Link != nil {
		return linkWords(*au.Link)
	}
	return from
}

// costSourcesWords names where the what-if's call and GPU costs came from.
func costSourcesWords(au *audit.Audit, costs []replay.CostUse) string {
	calls, gpus := map[string]bool{}, map[string]bool{}
	for _, c := range costs {
		if c.CallSource != "" {
			calls[c.CallSource] = true
		}
		if c.GPUSource != "" {
			gpus[c.GPUSource] = true
		}
	}
	list := func(set map[string]bool) string {
		var out []string
		for _, s := range []string{audit.SourceCapture, audit.SourceRun, audit.SourceLink, audit.SourceLaunch, audit.SourceMixed} {
			if set[s] {
				out = append(out, costSourceNames[s])
			}
		}
		if len(out) == 0 {
			return "nowhere"
		}
		return words.List(out)
	}
	s := "call times from " + list(calls) + ", copy times from " + list(gpus)
	for _, c := range costs {
		if c.GPUSource == audit.SourceLink && c.GPUFrom != "" {
			// Where the link's rate comes from, which says when it is assumed.
			return s + " (" + fromWords(au, c.GPUFrom) + ")"
		}
	}
	return s
}

// costSourceNames name the sources of pinned costs.
var costSourceNames = map[string]string{audit.SourceCapture: "the capture's own pinned copies", audit.SourceRun: "the run folder's timed copies",
	audit.SourceLink: "the link rate", audit.SourceLaunch: "the capture's kernel launch calls", audit.SourceMixed: "more than one of those",
	audit.SourceNone: "nowhere (kept as measured)"}

// sourcesWords names where the pinned costs came from.
func sourcesWords(p *audit.Prediction) string {
	if p == nil || len(p.Sources) == 0 {
		return "nothing: no pageable copy to cost"
	}
	var out []string
	for _, s := range p.Sources {
		out = append(out, costSourceNames[s])
	}
	return words.List(out)
}

// gainWords says, after an audit's finding, what pinning its copies is
// predicted to do to the regions it judges: which get faster, by how much,
// at which of the bound's costs, or that none does at any cost (as the
// advice's "no faster" says), so the rule broken does not read as time to
// be won.
func gainWords(au *audit.Audit, them string) string {
	var faster, unsure, lowOnly, same []string
	for _, r := range au.Judged() {
		if r.NotPredicted != nil || r.Time() <= 0 {
			continue
		}
		mid, low, hi := r.Predicted()
		gain := func(at float64) string { return fmt.Sprintf("%s %.1f%%", r.Name, 100*(1-at/r.Time())) }
		switch {
		case !audit.NoGain(r.Time(), hi):
			faster = append(faster, gain(mid))
		case !audit.NoGain(r.Time(), mid):
			unsure = append(unsure, gain(mid))
		case !audit.NoGain(r.Time(), low):
			lowOnly = append(lowOnly, gain(low))
		default:
			same = append(same, fmt.Sprintf("%s %s ms now, %s ms pinned", r.Name, auditMs(r.Time()), auditMs(mid)))
		}
	}
	var parts []string
	if len(faster) > 0 {
		parts = append(parts, words.List(firstFew(faster))+" faster")
	}
	if len(unsure) > 0 {
		parts = append(parts, words.List(firstFew(unsure))+" faster at the middle cost (none at the high)")
	}
	if len(lowOnly) > 0 {
		parts = append(parts, words.List(firstFew(lowOnly))+" faster only at the low cost (none at the middle)")
	}
	switch {
	case len(parts) > 0:
		return "; pinning " + them + " is predicted to make " + strings.Join(parts, ", and ")
	case len(same) > 0:
		return "; pinning " + them + " is predicted to make no region faster (" + strings.Join(same, "; ") + ")"
	}
	return ""
}

// firstFew keeps a headline's list short: the first three, then how many
// more.
func firstFew(s []string) []string {
	if len(s) <= 3 {
		return s
	}
	return append(s[:3:3], fmt.Sprintf("%d more", len(s)-3))
}

// fasterWords says, after a check's verdict, which of the judged regions
// whose times after are what the fix made of them (held, died, or too
// wide to decide; not those start-up decides) got faster and which did
// not: the verdict is about the prediction, and a user asks about the
// time.
func fasterWords(c *audit.Check) string {
	var faster, not []string
	for _, r := range c.Regions {
		if !r.Judged || r.AfterInstances == 0 || (r.Verdict != audit.Held && r.Verdict != audit.Died && r.Why != audit.WhyTooWide) {
			continue
		}
		if r.Faster {
			faster = append(faster, pairName(r))
		} else {
			not = append(not, pairName(r))
		}
	}
	switch {
	case len(not) == 0 && len(faster) > 0:
		return "; faster after: " + words.List(faster)
	case len(faster) == 0 && len(not) > 0:
		return "; not faster after: " + words.List(not)
	case len(not) > 0:
		return "; faster after: " + words.List(faster) + "; not faster: " + words.List(not)
	}
	return ""
}

// pairName names a region a check compares: its name, with the region
// after's where --match pairs it with one named otherwise.
func pairName(r audit.RegionCheck) string {
	if r.AfterName != "" && r.AfterName != r.Name {
		return r.Name + " -> " + r.AfterName
	}
	return r.Name
}

// checkView is the answer of a check: each region before, predicted and
// after, with its verdict.
func checkView(v *auditView, out *audit.Output, verbose bool) {
	c := out.Check
	v.Title = fmt.Sprintf("Check of %s against %s", ctlchar.Line(c.Before), ctlchar.Line(c.After))
	v.About = []string{"before: " + aboutAudit(out.Before), "after: " + aboutAudit(out.After)}
	v.Verdict = string(c.Verdict)
	v.Regions = tableView{Title: "Regions (ms): before, predicted with the copies pinned, after",
		Head:  []string{"region", "time", "before", "predicted", "bound", "after", "verdict"},
		Right: []bool{false, false, true, true, false, true, false}, Missing: noRegion}
	var judged, held, died, wide, startUp int
	var regions []audit.Region
	var checks []audit.RegionCheck
	for _, r := range c.Regions {
		if r.Judged {
			judged++
			switch {
			case r.Verdict == audit.Held:
				held++
			case r.Verdict == audit.Died:
				died++
			case r.Why == audit.WhyTooWide:
				wide++
			case r.Why == audit.WhyStartUp:
				startUp++
			}
		}
	}
	all := make([]audit.Region, len(c.Regions))
	for i, r := range c.Regions {
		all[i] = r.Region
	}
	shown, left := shownRegions(all, func(i int) bool { return c.Regions[i].Judged }, verbose)
	for _, i := range shown {
		r := c.Regions[i]
		mid, _, _ := r.Predicted()
		after, verdict := "-", string(r.Verdict)
		if r.AfterInstances > 0 {
			after = auditMs(r.AfterMs())
		}
		if !r.Judged {
			verdict = "(not judged)"
		}
		predicted, bound := auditMs(mid), boundWords(r.BoundLowMs, r.BoundHighMs)
		if r.NotPredicted != nil {
			predicted, bound = "-", "not predicted"
		}
		v.Regions.Rows = append(v.Regions.Rows, []string{pairName(r), string(r.Measure), auditMs(r.Time()), predicted, bound, after, verdict})
		if r.Judged {
			v.Regions.setVerdict(len(v.Regions.Head)-1, r.Verdict)
		}
		regions = append(regions, r.Region)
		checks = append(checks, r)
	}
	v.Regions.Note = regionsNote(left, out.Before, out.After)
	v.Shares = sharesTable(regions, checks)
	missing := missingAfter(c)
	unresolved, firstUnresolved := unresolvedRegions(c)
	switch {
	case c.Verdict == audit.Held && held == judged:
		v.Answer = fmt.Sprintf("held: every judged region's time after lies in its predicted bound (%d of %d)", held, judged) + fasterWords(c)
	case c.Verdict == audit.Held:
		var rest []string
		if wide > 0 {
			rest = append(rest, fmt.Sprintf("%d too wide to decide", wide))
		}
		if startUp > 0 {
			rest = append(rest, fmt.Sprintf("%d decided by start-up", startUp))
		}
		if len(unresolved) > 0 {
			rest = append(rest, fmt.Sprintf("%d resting on unresolved waits", len(unresolved)))
		}
		v.Answer = fmt.Sprintf("held: %d of %d judged regions lie in their predicted bound (%s)", held, judged, strings.Join(rest, ", ")) + fasterWords(c)
	case c.Verdict == audit.Died:
		v.Answer = fmt.Sprintf("died: %d of %d judged regions lie outside their predicted bound", died, judged) + fasterWords(c)
	case len(missing) > 0:
		v.Answer = fmt.Sprintf("unavailable: the capture after has no region %s, which the check judges (renamed, or its ranges gone), so the fix cannot be checked there; --match %s=NAME compares it with a region named otherwise",
			strings.Join(missing, ", "), missing[0])
	case len(unresolved) > 0:
		v.Answer = fmt.Sprintf("unavailable: the replay of %s rests on waits %s: %s", words.List(unresolved), unresolvedWaitWords, unresolvedWhy(firstUnresolved))
	case otherCountWords(c) != "":
		v.Answer = "unavailable: " + otherCountWords(c) + ", so its ranges after are not the ones predicted and the fix cannot be checked there"
	case notPredicted(c):
		v.Answer = "unavailable: " + notPredictedWords(c.Regions[0].NotPredicted)
	case c.Unseen == nil && !c.Fix.Made:
		v.Answer = "unavailable: " + notFixedWords(c.Fix)
	case wide > 0 || startUp > 0:
		var parts []string
		if wide > 0 {
			parts = append(parts, fmt.Sprintf("%s too wide to decide: each bound holds its region's own time before, so the prediction allows no change",
				nounsOf(int64(wide), "judged region")))
		}
		if startUp > 0 {
			parts = append(parts, fmt.Sprintf("%s decided by start-up: its loading of device code differs between the captures",
				nounsOf(int64(startUp), "judged region")))
		}
		v.Answer = "unavailable: " + strings.Join(parts, "; ") + fasterWords(c)
	default:
		v.Answer = "unavailable: no region could be judged"
	}
	noCopies := 0
	for _, i := range shown {
		r := c.Regions[i]
		if r.Why == audit.WhyNoCopies {
			noCopies++
			continue
		}
		v.Notes = append(v.Notes, regionCheckWords(&r, noGainWhy(out.Before)))
	}
	if noCopies > 0 {
		v.Notes = append(v.Notes, fmt.Sprintf("%s above held no host-device copy call, so pinning does not change them: not judged", nounsOf(int64(noCopies), "region")))
	}
	if u := c.Unseen; u != nil {
		v.Notes = append(v.Notes, unseenWords(u))
	}
	v.Notes = append(v.Notes,
		"bound: the prediction at the low and high costs, widened by "+pctPlain(audit.ModelError)+" for the model's own error, by the replay's error on the region as captured, and for a median by how far its instances' 90% interval reaches (docs/audit.md)",
		fmt.Sprintf("host-to-device copy calls held the host %s before and %s after (%s); %s host-to-device before, %s after",
			ns(c.HtoDBeforeNs), ns(c.HtoDAfterNs), htodPredictedWords(c, out.Before.Prediction),
			formatMB(c.HtoDBytesBefore), formatMB(c.HtoDBytesAfter)),
		pinCostWords(c),
		replayNote(out.Before))
}

// otherCountWords says which judged regions ran another number of times
// in the capture after (audit.WhyInstances), "" when none did.
func otherCountWords(c *audit.Check) string {
	var out []string
	for _, r := range c.Regions {
		if r.Why == audit.WhyInstances {
			after := fmt.Sprint(r.AfterInstances)
			if (r.Instances == 1) != (r.AfterInstances == 1) {
				after = plural(r.AfterInstances, "time")
			}
			out = append(out, fmt.Sprintf("%s ran %s before and %s after", r.Name, plural(r.Instances, "time"), after))
		}
	}
	return strings.Join(out, ", ")
}

// htodPredictedWords says what the check's prediction of the host-to-device
// copy calls' host time was: none where the what-if found a pinned cost
// for none of their pageable copies (the time after would be the time
// before, kept, not foreseen).
func htodPredictedWords(c *audit.Check, p *audit.Prediction) string {
	if p.Unpredicted(vocab.CopyHtoD) {
		return "not predicted: the what-if found no pinned cost for their copies from pageable memory"
	}
	return fmt.Sprintf("predicted %s, bound %s to %s", ns(c.PredictedAfterNs), ns(c.PredictedAfterLowNs), ns(c.PredictedAfterHighNs))
}

// regionCheckWords explains one region's verdict; why is the reason its
// prediction may be no faster (noGainWhy of the audit before).
func regionCheckWords(r *audit.RegionCheck, why string) string {
	mid, lo, hi := r.Predicted()
	m := measureWords(r.Measure, r.Instances)
	switch r.Why {
	case audit.WhyMissing:
		return fmt.Sprintf("%s: not in the capture after, so not judged", r.Name)
	case audit.WhyUnmatched:
		return fmt.Sprintf("%s: not judged: the match names other regions", r.Name)
	case audit.WhyNoCopies:
		return fmt.Sprintf("%s: not judged: no host-device copy call inside it", r.Name)
	case audit.WhyNotJudged:
		return fmt.Sprintf("%s: %s before, %s after, not judged: the whole capture holds start-up, which differs from run to run, so the NVTX ranges with copies are judged",
			r.Name, msWords(r.Time()), msWords(r.AfterMs()))
	case audit.WhyUnseen:
		return fmt.Sprintf("%s: unavailable: %s before, %s after (%s); the replay predicted %s, but the capture cannot show what the fix changed (below)",
			r.Name, msWords(r.Time()), msWords(r.AfterMs()), m, msWords(mid))
	case audit.WhyNoPredict:
		return fmt.Sprintf("%s: unavailable: %s before, %s after (%s), %s", r.Name, msWords(r.Time()), msWords(r.AfterMs()), m, notPredictedWords(r.NotPredicted))
	case audit.WhyUnresolved:
		return fmt.Sprintf("%s: unavailable: %s before, %s after (%s); the replay predicted %s, but %s", r.Name, msWords(r.Time()), msWords(r.AfterMs()), m, msWords(mid), unresolvedRegionWords(r.Unresolved))
	case audit.WhyNotFixed:
		if r.NotPredicted != nil {
			// No prediction to check: its zeroed fields are no time.
			return fmt.Sprintf("%s: unavailable: %s before, %s after (%s), but the capture after did not make the fix, and the region is %s",
				r.Name, msWords(r.Time()), msWords(r.AfterMs()), m, notPredictedWords(r.NotPredicted))
		}
		return fmt.Sprintf("%s: unavailable: %s before, %s after (%s), but the capture after did not make the fix, so it cannot check the prediction %s",
			r.Name, msWords(r.Time()), msWords(r.AfterMs()), m, msWords(mid))
	case audit.WhyInstances:
		return fmt.Sprintf("%s: unavailable: %d instances before and %d after, so its ranges after are not the ones predicted (split, merged, lost or traced twice): its time after (%s) cannot check the prediction %s",
			r.Name, r.Instances, r.AfterInstances, msWords(r.AfterMs()), msWords(mid))
	case audit.WhyStartUp:
		return fmt.Sprintf("%s: unavailable: %s before, %s after (%s), but loading device code (the first launches' modules and libraries) held the host %s inside it before and %s after: "+
			"one-time start-up that differs from run to run, with host work the trace does not show beside it, so the time after cannot check the prediction %s (bound %s ms)",
			r.Name, msWords(r.Time()), msWords(r.AfterMs()), m, msWords(r.LoadingMs), msWords(r.AfterLoadingMs), msWords(mid), boundWords(r.BoundLowMs, r.BoundHighMs))
	}
	perBefore, perAfter := r.CopyCallMs/float64(max(r.Instances, 1)), r.AfterCopyCallMs/float64(max(r.AfterInstances, 1))
	var s string
	if r.Faster {
		s = fmt.Sprintf("%s: faster, %s before, %s after (%s, %s)", r.Name, msWords(r.Time()), msWords(r.AfterMs()), pctSigned(r.AfterMs()/r.Time()-1), m)
	} else {
		s = fmt.Sprintf("%s: no faster, %s before, %s after (%s)", r.Name, msWords(r.Time()), msWords(r.AfterMs()), m)
		if perAfter < perBefore {
			s += fmt.Sprintf(", though its copy calls held the host %s per instance before and %s after", msWords(perBefore), msWords(perAfter))
		}
	}
	bound := fmt.Sprintf("the bound %s ms of the predicted %s", boundWords(r.BoundLowMs, r.BoundHighMs), msWords(mid))
	switch r.Why {
	case audit.WhyInBound:
		s += "; held: it lies in " + bound
	case audit.WhyAbove:
		s += "; died: it lies above " + bound + ", slower than predicted"
	case audit.WhyBelow:
		s += "; died: it lies below " + bound + ", faster than predicted"
	case audit.WhyTooWide:
		return s + "; too wide to decide: " + bound + " holds the time before, so it allows no change: " + wideWords(r, lo, hi)
	case audit.WhyNoGain:
		return s + fmt.Sprintf("; held: every cost predicted it no faster (costs %s ms: %s), and it lies in %s (widened by %s below and %s above)",
			boundWords(lo, hi), why, bound, pctPlain(r.Tolerance.Low()), pctPlain(r.Tolerance.High()))
	}
	s += fmt.Sprintf(" (costs %s ms, widened by %s below and %s above)", boundWords(lo, hi), pctPlain(r.Tolerance.Low()), pctPlain(r.Tolerance.High()))
	if r.Why != audit.WhyInBound && r.Why != audit.WhyNoGain {
		ob, oa := r.OutsideMs(), r.AfterOutsideMs()
		if math.Abs(oa-ob) > audit.ModelError*r.Time() {
			s += fmt.Sprintf("; its thread spent %s outside CUDA calls before and %s after, work the replay keeps as measured", msWords(ob), msWords(oa))
		}
	}
	return s
}

// pinShownWords says what in the capture after showed its way to pin.
func pinShownWords(p *audit.PinShown) string {
	if p == nil {
		return "its way to pin"
	}
	if p.Clue == audit.ClueThread {
		return fmt.Sprintf("its %s thread made %s", p.Thread, nounsOf(int64(p.Calls), "CUDA call"))
	}
	when := "pinned again as they went on"
	if p.Clue == audit.CluePinnedFirst {
		when = "pinned once, before them"
	}
	return fmt.Sprintf("its %s of pinned memory held the host %s, %s of it among its copies from pinned memory: %s", nounsOf(int64(p.Allocs), "allocation"), ns(p.AllocNs), ns(p.AmongNs), when)
}

// notPredicted reports whether the check's regions have no prediction.
func notPredicted(c *audit.Check) bool {
	return len(c.Regions) > 0 && c.Regions[0].NotPredicted != nil
}

// wideWords says what widened a region's bound over its time before.
func wideWords(r *audit.RegionCheck, lo, hi float64) string {
	t := r.Tolerance
	switch r.WideBy {
	case audit.WideCost:
		return fmt.Sprintf("its costs themselves reach it (%s ms; pinning by copy pays the host copy at the pageable call's measured time, --pin-by in-place does not)", boundWords(lo, hi))
	case audit.WideNoise:
		return fmt.Sprintf("its median's 90%% interval widens it by %s below and %s above", pctPlain(t.NoiseLow), pctPlain(t.NoiseHigh))
	case audit.WideFit:
		return fmt.Sprintf("the replay's error on the region, %s, widens it", pctPlain(t.Fit))
	}
	return fmt.Sprintf("the model's own error, %s, widens it", pctPlain(t.Model))
}

// notPredictedWords says why a region has no prediction.
func notPredictedWords(n *audit.NotPredicted) string {
	if n.NoCalls {
		return "not predicted: its NVTX range is on a thread that makes no CUDA call inside it, while other threads' copy calls hold host time in it: the replay keeps that thread's time as measured, and the trace does not show whether it waits for those copies (put the range on the thread that makes the copies)"
	}
	if n.Uncosted > 0 {
		return fmt.Sprintf("not predicted: the what-if found no pinned cost for any of the capture's %s from pageable memory (a copy needs its call's time and its GPU time; a run folder, --rates RUN_DIR, gives both)",
			nounsOf(int64(n.Uncosted), "copy"))
	}
	return fmt.Sprintf("not predicted: the replay ties no kernel to any of the capture's %s, so it cannot tell when the compute beside the copies runs (CSV reports name no process of a GPU operation, and tie none where the API trace holds several processes: give the SQLite export, nsys export --type sqlite)",
		nounsOf(n.Launches, "launch call"))
}

// unresolvedRegions names the judged regions of the check that its
// capture before's unresolved waits leave unavailable
// (audit.WhyUnresolved), each with its count of waits, and the first
// one's waits.
func unresolvedRegions(c *audit.Check) ([]string, *audit.Unresolved) {
	var names []string
	var first *audit.Unresolved
	for _, r := range c.Regions {
		if r.Why == audit.WhyUnresolved {
			if first == nil {
				first = r.Unresolved
			}
			names = append(names, fmt.Sprintf("%s (%s)", r.Name, nounsOf(int64(r.Unresolved.Waits), "wait")))
		}
	}
	return names, first
}

// unresolvedWaitWords says what a replay across unresolved waits rests on.
const unresolvedWaitWords = "on an event (cudaStreamWaitEvent, cudaEventSynchronize, a polling cudaEventQuery) the capture cannot resolve"

// unresolvedWhy says why the capture cannot resolve its waits on events,
// what the replay assumed of them, and what to do.
func unresolvedWhy(u *audit.Unresolved) string {
	var why []string
	const export = "nsys export --type sqlite -o FILE.sqlite REPORT.nsys-rep"
	const none = ", and each is replayed as waiting for no GPU work"
	of := func(n int) string {
		if n < u.Waits {
			return fmt.Sprintf("for %d of them, ", n)
		}
		return ""
	}
	if recorded := u.Waits - u.Unnamed - u.Unmatched; recorded > 0 {
		switch {
		case u.NoTable:
			why = append(why, fmt.Sprintf("%sthe export has no %s table, so no wait on an event can be tied to the work it waited for%s; export the report with an Nsight Systems release whose SQLite export writes that table (a newer nsys: %s)", of(recorded), nsysdb.TableCUDAEvent, none, export))
		case u.EventRecords == 0:
			why = append(why, fmt.Sprintf("%sthe export's %s table is empty, so no wait on an event can be tied to the work it waited for%s; export the report again (%s), with a newer nsys if it is empty again", of(recorded), nsysdb.TableCUDAEvent, none, export))
		default:
			why = append(why, fmt.Sprintf("%sthe export's %s table (%s) holds no recording of their events before them%s: the events were recorded before the capture began, or the export lost the records; start the capture before the events are first recorded, or export the report again (%s)",
				of(recorded), nsysdb.TableCUDAEvent, nounsOf(int64(u.EventRecords), "recording"), none, export))
		}
	}
	if u.Unnamed > 0 {
		if u.NoSyncTable {
			why = append(why, fmt.Sprintf("%sthe export has no %s table, whose records name the event each wait waited for%s; export the report with an Nsight Systems release whose SQLite export writes that table (%s)", of(u.Unnamed), nsysdb.TableSync, none, export))
		} else {
			why = append(why, fmt.Sprintf("%sthe export's %s table has no record of the wait, which would name its event%s: the export lost them; export the report again (%s)", of(u.Unnamed), nsysdb.TableSync, none, export))
		}
	}
	if u.Unmatched > 0 {
		why = append(why, fmt.Sprintf("%sthe recording of the event their synchronisation record names (by eventSyncId) is not in the export's %s table before them, so each is replayed as waiting for the event's last recording before it, a guess: the export lost the records; export the report again (%s)", of(u.Unmatched), nsysdb.TableCUDAEvent, export))
	}
	return strings.Join(why, "; ")
}

// unresolvedRegionWords says what a region's replay rests on that the
// capture cannot say, and what to do.
func unresolvedRegionWords(u *audit.Unresolved) string {
	return fmt.Sprintf("its replay rests on %s %s: %s", nounsOf(int64(u.Waits), "wait"), unresolvedWaitWords, unresolvedWhy(u))
}

// notFixedWords says that the capture after still makes the pageable
// copies the fix was to remove.
func notFixedWords(f audit.Fix) string {
	return fmt.Sprintf("not fixed: AFTER still makes %s from pageable memory, %s (before: %s, %s), so it cannot check a prediction of the fix",
		nounsOf(f.After.Count, "host-device copy"), formatMB(f.After.Bytes), nounsOf(f.Before.Count, "copy"), formatMB(f.Before.Bytes))
}

// unseenWords says why the capture cannot show what the fix changed.
func unseenWords(u *audit.Unseen) string {
	return fmt.Sprintf("%s stages its host-to-device copies where a CUDA trace cannot see: all %s of at least 1 MiB already come from pinned memory, "+
		"because XLA first copies the host array into a pinned buffer of its own (CPU work outside CUDA calls), so the trace shows nothing for the replay "+
		"to re-cost and cannot check a prediction. A CPU profile shows the staging: nsys profile --sample=process-tree --cpuctxsw=process-tree "+
		"--python-sampling=true",
		frameworkWords[u.Framework], nounsOf(u.PinnedHtoD, "copy"))
}

// pinCostWords names what pinning cost in the capture after.
func pinCostWords(c *audit.Check) string {
	a, b := c.PinAllocsAfter, c.PinAllocsBefore
	if a.Calls == 0 {
		return "the capture after made no call that allocates or registers pinned memory (cudaHostAlloc, cudaMallocHost, cudaHostRegister, cuMemHostAlloc)"
	}
	var apis []string
	for _, x := range a.ByAPI {
		apis = append(apis, fmt.Sprintf("%s, %s", nounsOf(x.Calls, x.API+" call"), ns(x.HostNs)))
	}
	before := "none"
	if b.Calls > 0 {
		before = fmt.Sprintf("%s, %s", nounsOf(b.Calls, "call"), ns(b.HostNs))
	}
	return fmt.Sprintf("pinning cost the capture after %s of host time (%s); before: %s",
		ns(a.HostNs), strings.Join(apis, "; "), before)
}

// adviceOf says what to change for each offending class, in the
// framework's words, and how to find a copy's source line.
func adviceOf(au *audit.Audit) adviceView {
	fw := au.Framework.Framework
	a := adviceView{Framework: frameworkWords[fw]}
	at := map[string]int{}
	for _, c := range au.TopOffenders {
		if c.HostMemory != audit.Pageable || (c.Direction != vocab.CopyHtoD && c.Direction != vocab.CopyDtoH) {
			continue
		}
		fix := fixWords(fw, c.Direction, c.APIKind)
		key := strings.Join(fix, "\n")
		i, ok := at[key]
		if !ok {
			i = len(a.Classes)
			at[key] = i
			a.Classes = append(a.Classes, adviceClass{Fix: fix})
		}
		a.Classes[i].Classes = append(a.Classes[i].Classes, fmt.Sprintf("%s: %s, %s, held the host %s (%s %s)%s", c.Label(),
			nounsOf(c.Count, "copy"), formatMB(c.Bytes), ns(c.HostNs), auditPct(c.HostShare), shareWord(au, c), noGainWords(au, c.Range)))
	}
	if len(a.Classes) == 0 {
		a.None = "no copy from pageable memory holds the host: nothing to pin"
		if hidden := coverage.HidesSaving(au.Diagnostics); len(hidden) > 0 {
			a.None = "no copy the capture holds is from pageable memory; " + savingHiddenWords(hidden)
		}
		return a
	}
	a.Sites, a.Line = callSitesOf(au)
	return a
}

// noGainWords warns, for a class inside NVTX range name, when every cost
// of the what-if predicts that range no faster (audit.NoGain): the fix
// moves the copies' host time rather than saving it there. "" otherwise.
func noGainWords(au *audit.Audit, name string) string {
	if name == "" {
		return ""
	}
	r := au.Region(name)
	if r == nil || r.NotPredicted != nil || r.PageableCallMs <= 0 {
		return ""
	}
	mid, low, high := r.Predicted()
	if !audit.NoGain(r.Time(), low) {
		return ""
	}
	return fmt.Sprintf("; pinning is predicted to make %s no faster: %s now, %s pinned (%s ms at every cost): %s",
		name, msWords(r.Time()), msWords(mid), boundWords(low, high), noGainWhy(au))
}

// noGainWhy says why every cost of an audit's what-if can predict a region
// no faster, by the way the what-if pins: a host copy into pinned memory,
// on the copying thread or by a pin thread of its interpreter, takes back
// the host time the copy calls save; buffers pinned in place leave the
// region nothing to wait less for.
func noGainWhy(au *audit.Audit) string {
	if au != nil && au.Replay != nil {
		switch au.Replay.PinBy {
		case replay.PinByThread:
			return "the pin thread's copy takes the copy calls' saved host time back on their thread"
		case replay.PinByCopy:
			return "the copy into pinned memory takes the copy calls' saved host time back on their thread"
		}
	}
	return "its time does not wait on these copies"
}

// fixWords is the fix of a pageable class in the framework's words.
func fixWords(fw framework.Name, dir vocab.CopyKind, kind audit.APIKind) []string {
	toDevice := dir == vocab.CopyHtoD
	switch fw {
	case framework.PyTorch:
		if toDevice {
			return []string{"batches from a DataLoader: DataLoader(..., pin_memory=True), which pins each batch on a thread of its own",
				"a tensor copied again and again: tensor.pin_memory() once, then tensor.to(device, non_blocking=True); non_blocking=True overlaps nothing from pageable memory"}
		}
		return []string{"copy into a pinned tensor made once, torch.empty(shape, pin_memory=True), with out.copy_(t, non_blocking=True), and synchronise before reading it"}
	case framework.CuPy:
		if toDevice {
			return []string{"make the host array with cupyx.empty_pinned(shape, dtype) (or cupyx.zeros_pinned), fill it in place, and copy it with cupy.asarray or ndarray.set(host, stream=...)"}
		}
		return []string{"copy into a pinned array made once with cupyx.empty_pinned: ndarray.get(out=pinned, stream=...)"}
	case framework.JAX:
		return []string{`put the host array in pinned memory first: jax.device_put(x, jax.devices()[0].memory("pinned_host")) (or a sharding with memory_kind="pinned_host"), then device_put it to the device`}
	case framework.Driver:
		return []string{"allocate the host buffer once with cuMemHostAlloc (or pin an existing one with cuMemHostRegister) and reuse it"}
	}
	fix := "allocate the host buffer once with cudaMallocHost or cudaHostAlloc (or pin an existing one with cudaHostRegister) and reuse it"
	if kind == audit.Async {
		fix += "; only then does cudaMemcpyAsync return before its copy ends"
	}
	return []string{fix}
}

// detailOf is one capture's classes, findings, prediction and the rest.
func detailOf(au *audit.Audit, verbose bool) auditDetail {
	d := auditDetail{Title: "Audit of " + ctlchar.Line(au.Capture)}
	hidden := au.Hidden()
	counts := fmt.Sprintf("%d CUDA API calls in %s of host time (%s); %s (%d without an API call in the trace), %s kept apart",
		au.APICalls, ns(au.SpanNs), au.SpanFrom, nounsOf(au.Copies, "copy"), au.Unmatched, nounsOf(au.Memsets, "memset"))
	noCopies := "none: the capture has no copies"
	if len(hidden) > 0 {
		counts += "; " + hiddenWords(hidden)
		noCopies = "none in the capture; " + hiddenWords(hidden)
	}
	d.About = []string{aboutAudit(au), counts}
	if t := tracingWords(au.Coverage); t != "" {
		d.About = append(d.About, t)
	}
	d.Totals = tableView{Title: "Copies by direction, host memory and API kind",
		Head:  []string{"direction", "host memory", "API", "copies", "MB", "host time", "GPU time"},
		Right: []bool{false, false, false, true, true, true, true}, Missing: noCopies}
	for _, t := range au.Totals {
		d.Totals.Rows = append(d.Totals.Rows, []string{string(t.Direction), string(t.HostMemory), string(t.APIKind), fmt.Sprint(t.Count),
			fmt.Sprintf("%.1f", float64(t.Bytes)/1e6), ns(t.HostNs), ns(t.GPUNs)})
	}
	classes := au.Classes
	d.Classes = tableView{Title: fmt.Sprintf("Classes by host time held (%d in all)", len(classes)),
		Head:  []string{"class", "copies", "MB", "host time", "of region", "GPU time", "GPU GB/s"},
		Right: []bool{false, true, true, true, true, true, true}, Missing: "none"}
	if !verbose && len(classes) > AuditMaxClassRows {
		d.More = len(classes) - AuditMaxClassRows
		d.Classes.Title = fmt.Sprintf("Classes by host time held (%d in all; the first %d, -v lists every one)", len(classes), AuditMaxClassRows)
		classes = classes[:AuditMaxClassRows]
	}
	for _, c := range classes {
		d.Classes.Rows = append(d.Classes.Rows, []string{c.Label(), fmt.Sprint(c.Count), fmt.Sprintf("%.1f", float64(c.Bytes)/1e6), ns(c.HostNs),
			auditPct(c.HostShare), ns(c.GPUNs), fmt.Sprintf("%.1f", c.GPUGBps)})
	}
	for _, c := range au.TopOffenders {
		d.Offenders = append(d.Offenders, fmt.Sprintf("%s: %s, %s, held the host %s (%s %s)",
			c.Label(), nounsOf(c.Count, "copy"), formatMB(c.Bytes), ns(c.HostNs), auditPct(c.HostShare), shareWord(au, c)))
	}
	for _, f := range au.Findings {
		fv := findingView{Head: fmt.Sprintf("%s: %s, %s, %s of host time", f.ID, nounsOf(f.Count, "copy"), formatMB(f.Bytes), ns(f.HostNs)),
			Rule: findingRule(f.ID)}
		if len(hidden) > 0 {
			fv.Head += " among the copies the capture holds"
		}
		shown := f.Evidence
		if !verbose && len(shown) > auditShownEvidence {
			shown = shown[:auditShownEvidence]
		}
		switch {
		case len(f.Evidence) == 0:
		case int64(len(f.Evidence)) == f.Count:
			fv.Lead = "the copies, longest call first:"
		default:
			fv.Lead = fmt.Sprintf("the %d of %d copies that held the host longest:", len(f.Evidence), f.Count)
		}
		for _, e := range shown {
			fv.Evidence = append(fv.Evidence, auditEvidenceText(e, verbose))
		}
		fv.More = len(f.Evidence) - len(shown)
		d.Findings = append(d.Findings, fv)
	}
	d.Prediction = predictionWords(au, coverage.HidesSaving(au.Diagnostics))
	d.Replay = replayWords(au)
	if au.NVIDIA != nil {
		rule := ruleSummary(au.NVIDIA)
		if au.NVIDIA.Available && au.NVIDIA.RuleCount == 0 && len(hidden) > 0 {
			rule += "; " + hiddenWords(hidden)
		}
		d.Rule = append(d.Rule, rule)
		for _, f := range au.NVIDIA.OnlyRule {
			d.Rule = append(d.Rule, fmt.Sprintf("only the rule: pid %d, copy at %d ns, %s", f.PID, f.Start, ns(f.Duration)))
		}
		for _, e := range au.NVIDIA.OnlyAudit {
			d.Rule = append(d.Rule, fmt.Sprintf("only the audit: correlation id %d, pid %d, copy at %d ns, %s", e.CorrelationID, e.PID, e.GPUStart, ns(e.GPUNs)))
		}
	}
	for _, g := range au.Missing {
		d.Notes = append(d.Notes, diagView{Level: diag.Info, Code: "note", Message: fmt.Sprintf("%s: %s", g.Fact, g.Reason)})
	}
	for _, n := range diagViews(append(append([]diag.Diagnostic(nil), au.Diagnostics...), au.Exposures...)) {
		if !coverage.IsCode(n.Code) { // said beside the answer (limitsOf)
			d.Notes = append(d.Notes, n)
		}
	}
	return d
}

// predictionWords says what pinning should save of the copy calls' host
// time, group by group.
// saving lists the diagnostics that say what pinning would save may lie
// outside what the capture shows (coverage.HidesSaving).
func predictionWords(au *audit.Audit, saving []diag.Code) []string {
	p := au.Prediction
	if p == nil {
		return nil
	}
	if p.Count == 0 && len(saving) > 0 {
		return []string{"the capture holds no pageable host-device copy; " + savingHiddenWords(saving)}
	}
	if p.Count == 0 {
		return []string{"the capture has no pageable host-device copies: there is nothing for pinning to save"}
	}
	out := []string{fmt.Sprintf("pinning the %s (%s) should cut the host time their calls hold from %s to %s (%s-%s), saving %s; costs from %s",
		nounsOf(p.Count, "pageable copy"), formatMB(p.Bytes), ns(p.BeforeNs), ns(p.AfterNs), ns(p.AfterLowNs), ns(p.AfterHighNs),
		ns(p.SavedNs), sourcesWords(p))}
	if p.Unpredicted("") {
		out[0] = fmt.Sprintf("the host time the calls of the %s (%s) hold after pinning is not predicted: the what-if found no pinned cost for any of them; their calls hold %s now",
			nounsOf(p.Count, "pageable copy"), formatMB(p.Bytes), ns(p.BeforeNs))
	}
	for _, g := range p.Groups {
		if g.Count > 0 && int64(g.Uncosted) == g.Count {
			out = append(out, fmt.Sprintf("%s %s %s: %s, %s now, not predicted: no pinned cost", g.Direction, g.APIKind, g.SizeBucket,
				nounsOf(g.Count, "copy"), ns(g.BeforeNs)))
			continue
		}
		out = append(out, fmt.Sprintf("%s %s %s: %s, %s now -> %s (%s-%s) from %s", g.Direction, g.APIKind, g.SizeBucket,
			nounsOf(g.Count, "copy"), ns(g.BeforeNs), ns(g.AfterNs), ns(g.AfterLowNs), ns(g.AfterHighNs), groupSourceWords(au, g)))
	}
	if p.PinCopyNs > 0 {
		who := "the high bound of the regions pays it"
		if au.Replay != nil && au.Replay.PinBy == replay.PinByThread {
			who = "every cost of the regions pays it, on the copying thread"
		}
		out = append(out, fmt.Sprintf("copying the buffers into pinned memory costs up to %s more on the host, outside the copy calls (%s)", ns(p.PinCopyNs), who))
	}
	return out
}

// groupSourceWords says where a group's pinned cost came from.
func groupSourceWords(au *audit.Audit, g audit.GroupPrediction) string {
	switch g.Source {
	case audit.SourceCapture:
		return fmt.Sprintf("%s of this capture (median, 10th-90th percentile)", nounsOf(int64(g.Samples), "pinned "+string(g.APIKind)+" call"))
	case audit.SourceRun:
		return "the pinned copies timed in " + fromWords(au, g.From)
	case audit.SourceLink:
		return "the link: " + fromWords(au, g.From)
	case audit.SourceLaunch:
		return fmt.Sprintf("%s of this capture, which enqueue as a pinned copy call does (median, 10th-90th percentile)", nounsOf(int64(g.Samples), "kernel launch call"))
	case audit.SourceNone:
		return "nothing: no pinned cost, kept as measured"
	}
	return g.Source
}

// shareWord says what a class's host share is of: its region, or the
// whole capture where its NVTX range is no region (never closed).
func shareWord(au *audit.Audit, c *audit.Class) string {
	if c.Range != "" && len(au.Regions) > 0 && au.Region(replay.RegionOfRange(c.Range)) == nil {
		return "of the whole capture"
	}
	return "of its region"
}

// replayWords says how far to trust the replay: what it assumed and the
// classes of calls and ops the capture shows latest against it.
func replayWords(au *audit.Audit) []string {
	rp := au.Replay
	if rp == nil {
		return nil
	}
	out := []string{replayNote(au)}
	for _, a := range rp.Assumptions {
		switch a.Kind {
		case timeline.AssumeCopyThread, timeline.AssumeNoCost, timeline.AssumeGraphCopy:
			out = append(out, fmt.Sprintf("assumed %s: %s (%s, pid %d)", a.Kind, nounsOf(int64(a.Count), "time"), a.API, a.PID))
		case timeline.AssumeStreamKindsUnknown:
			out = append(out, fmt.Sprintf("assumed %s: the trace does not say how %s of pid %d were made (which is the legacy default stream, which are ordered with it): replayed as independent but for the events that join them",
				a.Kind, nounsOf(int64(a.Count), "stream"), a.PID))
		case timeline.AssumeRangeThreads:
			out = append(out, fmt.Sprintf("assumed %s: NVTX range %s (pid %d) is opened on %d threads, whose ranges are different work: each thread's are a region of their own, %s to %s, the threads numbered in the order of their first range of it",
				a.Kind, a.API, a.PID, a.Count, timeline.RangeOnThread(a.API, 0), timeline.RangeOnThread(a.API, a.Count-1)))
		case timeline.AssumeOpenRange:
			out = append(out, fmt.Sprintf("assumed %s: %s of NVTX range %s (pid %d) never closed before the capture ended: left out of the regions, and its copies' share is of the whole capture",
				a.Kind, counted(a.Count, "instance", "instances"), a.API, a.PID))
		case timeline.AssumeEventUnrecorded, timeline.AssumeEventUnknown, timeline.AssumeEventRecordWithoutCall, timeline.AssumeSyncStreamUnknown,
			timeline.AssumeEventRecordingUnmatched, timeline.AssumeEventGuessed:
			out = append(out, unresolvedWords(a))
		}
	}
	if rp.Forced > 0 {
		out = append(out, fmt.Sprintf("%s in a cycle were taken at their measured times", nounsOf(int64(rp.Forced), "dependency")))
	}
	return out
}

// missingAfter names the regions the check would judge that the capture
// after lacks (audit.WhyMissing).
func missingAfter(c *audit.Check) []string {
	var names []string
	for _, r := range c.Regions {
		if r.Why == audit.WhyMissing {
			names = append(names, r.Region.Name)
		}
	}
	return names
}

// unresolvedWords says which dependency the capture names that the
// timeline could not resolve, and what it assumed in its place: a trace
// that lacks what its own records point to, never seen in a whole one.
func unresolvedWords(a timeline.Assumption) string {
	of := fmt.Sprintf("pid %d", a.PID)
	if a.API != "" {
		of = a.API + ", " + of
	}
	if a.Event >= 0 {
		of += fmt.Sprintf(", event %d", a.Event)
	}
	if a.Corr != 0 {
		of += fmt.Sprintf(", the first: correlation id %d", a.Corr)
	}
	n := int64(a.Count)
	switch a.Kind {
	case timeline.AssumeEventUnrecorded:
		return fmt.Sprintf("unresolved: %s on an event no recording of which is in the trace before it (%s): each keeps its measured time and waits for no GPU work",
			nounsOf(n, "wait"), of)
	case timeline.AssumeEventRecordingUnmatched:
		return fmt.Sprintf("unresolved: %s naming a recording (by eventSyncId) the trace does not hold before it (%s): each is taken to wait for the event's last recording before it",
			nounsOf(n, "wait"), of)
	case timeline.AssumeEventGuessed:
		return fmt.Sprintf("unresolved: %s lacking the synchronisation record that names the event (%s): each is taken to wait for the last work launched before it on every stream of its process that ended before it returned",
			nounsOf(n, "event wait"), of)
	case timeline.AssumeEventUnknown:
		return fmt.Sprintf("unresolved: %s lacking the synchronisation record that names the event (%s): each keeps its measured time and waits for no GPU work",
			nounsOf(n, "event wait"), of)
	case timeline.AssumeEventRecordWithoutCall:
		if a.Stream >= 0 {
			of += fmt.Sprintf(", stream %d", a.Stream)
		}
		return fmt.Sprintf("unresolved: %s without a recording call in the trace (%s): left out, so the waits on the event look for another recording",
			nounsOf(n, "event recording"), of)
	default: // timeline.AssumeSyncStreamUnknown
		return fmt.Sprintf("unresolved: %s lacking the synchronisation record that names the stream (%s): each is taken to wait for the stream whose work ended last before it returned",
			nounsOf(n, "stream synchronisation"), of)
	}
}

// findingTitle is what a finding of the audit is, in words.
func findingTitle(id string) string {
	switch id {
	case audit.FindingSecretlySync:
		return "secretly synchronous: pageable async copies whose call held the host for most of the copy"
	case audit.FindingNoOverlap:
		return "cannot overlap: async copies whose call returned only after the copy had finished on the GPU"
	}
	return id
}

// findingRule is the rule by which the audit finds a finding's copies, in
// words made of the audit's own thresholds.
func findingRule(id string) string {
	switch id {
	case audit.FindingSecretlySync:
		return fmt.Sprintf("an async API, pageable host memory, and the call lasted at least %.0f%% of the copy's GPU time", 100*audit.SyncThreshold)
	case audit.FindingNoOverlap:
		return fmt.Sprintf("an async API, a copy of at least %d µs on the GPU, and the call ended at or after the copy's end, so nothing on the host ran beside the copy",
			audit.MinOverlapNs/1000)
	}
	return id
}

// ruleSummary is the comparison with NVIDIA's rule in one sentence.
func ruleSummary(rc *audit.RuleComparison) string {
	if !rc.Available {
		return fmt.Sprintf("NVIDIA's %s rule: not compared: %s", rc.Rule, rc.Note)
	}
	if rc.Agree {
		return fmt.Sprintf("NVIDIA's %s rule (%s) agrees: it lists the same %s", rc.Rule, ruleSourceWords(rc.Source), nounsOf(int64(rc.Both), "pageable async copy"))
	}
	if rc.SizesDiffer > 0 {
		lists := fmt.Sprintf("it lists %s, the audit %s, %d in both, and gives %d of those", nounsOf(int64(rc.RuleCount), "copy"), nounsOf(int64(rc.AuditCount), "pageable async copy"), rc.Both, rc.SizesDiffer)
		if rc.Both == rc.RuleCount && rc.Both == rc.AuditCount {
			lists = fmt.Sprintf("it lists the same %s, but gives %d of them", nounsOf(int64(rc.Both), "pageable async copy"), rc.SizesDiffer)
		}
		total := ""
		if rc.RuleMB != 0 || rc.AuditMB != 0 {
			total = fmt.Sprintf(", %.3f MB in all where the records give %.3f MB", rc.RuleMB, rc.AuditMB)
		}
		return fmt.Sprintf("NVIDIA's %s rule (%s) disagrees: %s other sizes than the capture's records do (%s)%s (its sizes are of another export, or were edited)",
			rc.Rule, ruleSourceWords(rc.Source), lists, sizeDiffWords(rc), total)
	}
	if rc.RuleMB != 0 || rc.AuditMB != 0 {
		return fmt.Sprintf("NVIDIA's %s rule (%s) disagrees: it lists the same %s, but of %.3f MB, where the capture's records give them %.3f MB (its sizes are of another export, or were edited)",
			rc.Rule, ruleSourceWords(rc.Source), nounsOf(int64(rc.Both), "pageable async copy"), rc.RuleMB, rc.AuditMB)
	}
	return fmt.Sprintf("NVIDIA's %s rule (%s) disagrees: it lists %s, the audit %s, %d in both",
		rc.Rule, ruleSourceWords(rc.Source), nounsOf(int64(rc.RuleCount), "copy"), nounsOf(int64(rc.AuditCount), "pageable async copy"), rc.Both)
}

// sizeDiffWords says which sizes the rule gives copies that the records
// give others, most copies first.
func sizeDiffWords(rc *audit.RuleComparison) string {
	var each []string
	var told int64
	for _, d := range rc.Sizes {
		each = append(each, fmt.Sprintf("%s: %.3f MB in the rule, %.3f MB in the records", nounsOf(d.Copies, "copy"), d.RuleMB, d.AuditMB))
		told += d.Copies
	}
	if rest := rc.SizesDiffer - told; rest > 0 {
		each = append(each, fmt.Sprintf("%d more of other sizes", rest))
	}
	return strings.Join(each, "; ")
}

// onPath is sep and path, or nothing where the source names no path (an
// audit's JSON read back without its words).
func onPath(sep, path string) string {
	if path == "" {
		return ""
	}
	return sep + path
}

// ruleSourceWords says how NVIDIA's rule's copies were had.
func ruleSourceWords(s audit.RuleSource) string {
	if s.Text != "" { // read back from a JSON: its words, as written
		return s.Text
	}
	switch s.Kind {
	case audit.RuleSourceAnalyze:
		return "nsys analyze -r " + nsysrule.AllArg + onPath(" on ", s.Path) + ", run beside the audit's stream"
	case audit.RuleSourceCSV:
		w := "the rule's CSV beside the capture" + onPath(", ", s.Path)
		if s.Capped {
			w += fmt.Sprintf(" (exactly %d rows: nsys analyze's default limit; make it with -r %s to list every copy)",
				nsysrule.DefaultRows, nsysrule.AllArg)
		}
		return w
	case audit.RuleSourceScan:
		return "the rule's definition applied to this audit's records; nsys analyze did not run: --nvidia-rule nsys runs it"
	}
	return ""
}
