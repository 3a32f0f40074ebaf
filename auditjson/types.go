package auditjson

import (
	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/framework"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/replay"
	"github.com/nsyscheck/nsyscheck/timeline"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// Clue is the JSON of framework.Clue.
type Clue struct {
	Of    framework.Name     `json:"of"`
	Kind  framework.ClueKind `json:"kind"`
	Name  string             `json:"name"`
	Count int64              `json:"count"`
}

// Detection is the JSON of framework.Detection.
type Detection struct {
	Framework     framework.Name `json:"framework"`
	Python        bool           `json:"python"`
	Clues         []Clue         `json:"clues"`
	Backtraces    bool           `json:"backtraces"`
	LoaderWorkers int            `json:"loaderWorkers,omitempty"`
}

// ReplayPeriod is the JSON of replay.Period.
type ReplayPeriod struct {
	Ms              float64 `json:"ms"`
	ReplayMs        float64 `json:"replayMs"`
	PredictedMs     float64 `json:"predictedMs"`
	PredictedLowMs  float64 `json:"predictedLowMs"`
	PredictedHighMs float64 `json:"predictedHighMs"`
}

// ReplayShare is the JSON of replay.Share.
type ReplayShare struct {
	Measured  float64 `json:"measured"`
	Predicted float64 `json:"predicted"`
}

// ReplayFit is the JSON of replay.Fit.
type ReplayFit struct {
	Median float64  `json:"median"`
	Span   float64  `json:"span"`
	Period *float64 `json:"period,omitempty"`
}

// ReplayOutside is the JSON of replay.Outside.
type ReplayOutside struct {
	MedianMs float64 `json:"medianMs"`
	TotalMs  float64 `json:"totalMs"`
}

// ReplayCI is the JSON of replay.CI.
type ReplayCI struct {
	LowMs    float64 `json:"lowMs"`
	HighMs   float64 `json:"highMs"`
	Coverage float64 `json:"coverage"`
}

// ReplayRegion is the JSON of replay.Region.
type ReplayRegion struct {
	Name                  string        `json:"name"`
	Instances             int           `json:"instances"`
	MedianMs              float64       `json:"medianMs"`
	SpanMs                float64       `json:"spanMs"`
	ReplayMedianMs        float64       `json:"replayMedianMs"`
	ReplaySpanMs          float64       `json:"replaySpanMs"`
	PredictedMedianMs     float64       `json:"predictedMedianMs,omitempty"`
	PredictedMedianLowMs  float64       `json:"predictedMedianLowMs,omitempty"`
	PredictedMedianHighMs float64       `json:"predictedMedianHighMs,omitempty"`
	PredictedSpanMs       float64       `json:"predictedSpanMs,omitempty"`
	PredictedSpanLowMs    float64       `json:"predictedSpanLowMs,omitempty"`
	PredictedSpanHighMs   float64       `json:"predictedSpanHighMs,omitempty"`
	TotalMs               float64       `json:"totalMs"`
	Period                *ReplayPeriod `json:"period,omitempty"`
	Overlap               ReplayShare   `json:"overlap"`
	HostShare             ReplayShare   `json:"hostShare"`
	Queued                ReplayShare   `json:"queued"`
	Fit                   ReplayFit     `json:"fit"`
	CopyCallMs            float64       `json:"copyCallMs"`
	PageableCallMs        float64       `json:"pageableCallMs"`
	Outside               ReplayOutside `json:"outside"`
	MedianCI              *ReplayCI     `json:"medianCI,omitempty"`
}

// NotPredicted is the JSON of audit.NotPredicted.
type NotPredicted struct {
	Uncosted int   `json:"uncosted,omitempty"`
	Launches int64 `json:"launches,omitempty"`
	NoCalls  bool  `json:"noCalls,omitempty"`
}

// Unresolved is the JSON of audit.Unresolved.
type Unresolved struct {
	Waits        int  `json:"waits"`
	Unnamed      int  `json:"unnamed,omitempty"`
	NoSyncTable  bool `json:"noSyncTable,omitempty"`
	Unmatched    int  `json:"unmatched,omitempty"`
	EventRecords int  `json:"eventRecords"`
	NoTable      bool `json:"noTable,omitempty"`
}

// Region is the JSON of audit.Region.
type Region struct {
	ReplayRegion
	Measure       audit.Measure  `json:"measure"`
	PageableShare float64        `json:"pageableShare"`
	NotPredicted  *NotPredicted  `json:"notPredicted,omitempty"`
	Loading       *ReplayOutside `json:"loading,omitempty"`
	Unresolved    *Unresolved    `json:"unresolved,omitempty"`
}

// GateRegion is the JSON of audit.GateRegion.
type GateRegion struct {
	Name  string  `json:"name"`
	Share float64 `json:"share"`
}

// Gate is the JSON of audit.Gate.
type Gate struct {
	Limit float64      `json:"limit"`
	Over  []GateRegion `json:"over"`
	Worst GateRegion   `json:"worst"`
}

// Total is the JSON of audit.Total.
type Total struct {
	Direction  vocab.CopyKind `json:"direction"`
	HostMemory vocab.MemKind  `json:"hostMemory"`
	APIKind    audit.APIKind  `json:"apiKind"`
	Count      int64          `json:"count"`
	Bytes      int64          `json:"bytes"`
	HostNs     int64          `json:"hostNs"`
	GPUNs      int64          `json:"gpuNs"`
}

// ClassKey is the JSON of audit.ClassKey.
type ClassKey struct {
	API        string         `json:"api"`
	APIKind    audit.APIKind  `json:"apiKind"`
	Direction  vocab.CopyKind `json:"direction"`
	HostMemory vocab.MemKind  `json:"hostMemory"`
	SizeBucket string         `json:"sizeBucket"`
	PID        int64          `json:"pid"`
	TID        int64          `json:"tid"`
	Stream     int64          `json:"stream"`
	Range      string         `json:"nvtxRange"`
	Migration  string         `json:"migration,omitempty"`
}

// Class is the JSON of audit.Class.
type Class struct {
	ClassKey
	Thread       string  `json:"thread,omitempty"`
	Count        int64   `json:"count"`
	Bytes        int64   `json:"bytes"`
	HostNs       int64   `json:"hostNs"`
	GPUNs        int64   `json:"gpuNs"`
	GPUGBps      float64 `json:"gpuGBps"`
	HostGBps     float64 `json:"hostGBps"`
	HostShare    float64 `json:"hostShare"`
	SecretlySync int64   `json:"secretlySync"`
}

// Frame is the JSON of audit.Frame.
type Frame struct {
	Symbol     string `json:"symbol"`
	Module     string `json:"module"`
	Unresolved bool   `json:"unresolved,omitempty"`
}

// SiteTotals is the JSON of audit.SiteTotals.
type SiteTotals struct {
	Copies int64 `json:"copies"`
	Bytes  int64 `json:"bytes"`
	HostNs int64 `json:"hostNs"`
}

// CallSite is the JSON of audit.CallSite.
type CallSite struct {
	Frame     Frame          `json:"frame"`
	Entry     *Frame         `json:"entry,omitempty"`
	Method    string         `json:"method,omitempty"`
	Direction vocab.CopyKind `json:"direction"`
	SiteTotals
	Share   float64 `json:"share"`
	Longest int64   `json:"longestCorrelationId"`
}

// CallSites is the JSON of audit.CallSites.
type CallSites struct {
	Stacks   bool       `json:"stacks"`
	Lacks    string     `json:"lacks,omitempty"`
	Sites    []CallSite `json:"sites"`
	Pageable SiteTotals `json:"pageable"`
	Unsited  SiteTotals `json:"withoutStack"`
}

// Evidence is the JSON of audit.Evidence.
type Evidence struct {
	CorrelationID int64          `json:"correlationId"`
	PID           int64          `json:"pid"`
	TID           int64          `json:"tid"`
	API           string         `json:"api"`
	Direction     vocab.CopyKind `json:"direction"`
	HostMemory    vocab.MemKind  `json:"hostMemory"`
	Bytes         int64          `json:"bytes"`
	CallStart     int64          `json:"callStart"`
	CallNs        int64          `json:"callNs"`
	GPUStart      int64          `json:"gpuStart"`
	GPUNs         int64          `json:"gpuNs"`
	Held          float64        `json:"held"`
	Range         string         `json:"nvtxRange,omitempty"`
}

// Finding is the JSON of audit.Finding.
type Finding struct {
	ID string `json:"id"`
	// Title and Rule are the finding's title and rule in words.
	Title    string     `json:"title"`
	Rule     string     `json:"rule"`
	Count    int64      `json:"count"`
	Bytes    int64      `json:"bytes"`
	HostNs   int64      `json:"hostNs"`
	Evidence []Evidence `json:"evidence"`
}

// GroupPrediction is the JSON of audit.GroupPrediction.
type GroupPrediction struct {
	Direction   vocab.CopyKind `json:"direction"`
	APIKind     audit.APIKind  `json:"apiKind"`
	SizeBucket  string         `json:"sizeBucket"`
	Count       int64          `json:"count"`
	Bytes       int64          `json:"bytes"`
	BeforeNs    int64          `json:"beforeNs"`
	AfterNs     int64          `json:"afterNs"`
	AfterLowNs  int64          `json:"afterLowNs"`
	AfterHighNs int64          `json:"afterHighNs"`
	Source      string         `json:"source"`
	From        string         `json:"from,omitempty"`
	Samples     int            `json:"samples"`
	Uncosted    int            `json:"uncosted"`
}

// HtoDPrediction is the JSON of audit.HtoDPrediction.
type HtoDPrediction struct {
	BeforeNs         int64 `json:"beforeNs"`
	PageableBeforeNs int64 `json:"pageableBeforeNs"`
	AfterNs          int64 `json:"afterNs"`
	AfterLowNs       int64 `json:"afterLowNs"`
	AfterHighNs      int64 `json:"afterHighNs"`
	Bytes            int64 `json:"bytes"`
}

// Prediction is the JSON of audit.Prediction.
type Prediction struct {
	Groups      []GroupPrediction `json:"groups"`
	Sources     []string          `json:"sources"`
	Count       int64             `json:"count"`
	Bytes       int64             `json:"bytes"`
	BeforeNs    int64             `json:"beforeNs"`
	AfterNs     int64             `json:"afterNs"`
	AfterLowNs  int64             `json:"afterLowNs"`
	AfterHighNs int64             `json:"afterHighNs"`
	SavedNs     int64             `json:"savedNs"`
	SavedLowNs  int64             `json:"savedLowNs"`
	SavedHighNs int64             `json:"savedHighNs"`
	PinCopyNs   int64             `json:"pinCopyNs"`
	HtoD        HtoDPrediction    `json:"htod"`
}

// ReplayBound is the JSON of replay.Bound.
type ReplayBound struct {
	Low  float64 `json:"low"`
	Mid  float64 `json:"mid"`
	High float64 `json:"high"`
}

// ReplayCostUse is the JSON of replay.CostUse.
type ReplayCostUse struct {
	Direction      vocab.CopyKind `json:"direction"`
	SizeClass      string         `json:"sizeClass"`
	Async          bool           `json:"async"`
	Copies         int            `json:"copies"`
	Bytes          int64          `json:"bytes"`
	CallNs         int64          `json:"callNs"`
	GPUNs          int64          `json:"gpuNs"`
	PinnedCallNs   ReplayBound    `json:"pinnedCallNs"`
	PinnedGPUNs    ReplayBound    `json:"pinnedGpuNs"`
	CallSource     string         `json:"callSource"`
	GPUSource      string         `json:"gpuSource"`
	CallFrom       string         `json:"callFrom,omitempty"`
	GPUFrom        string         `json:"gpuFrom,omitempty"`
	Samples        int            `json:"samples"`
	CallSamples    int            `json:"callSamples"`
	PinCopyNs      int64          `json:"pinCopyNs"`
	Uncosted       int            `json:"uncosted"`
	UncostedCallNs int64          `json:"uncostedCallNs"`
}

// Assumption is the JSON of timeline.Assumption.
type Assumption struct {
	Kind   timeline.AssumptionKind `json:"kind"`
	PID    int64                   `json:"pid"`
	API    string                  `json:"api,omitempty"`
	Event  int64                   `json:"event"`
	Stream int64                   `json:"stream"`
	TID    int64                   `json:"tid,omitempty"`
	Count  int                     `json:"count"`
	Corr   int64                   `json:"correlationId,omitempty"`
}

// ReplayClass is the JSON of replay.Class.
type ReplayClass struct {
	API       string         `json:"api,omitempty"`
	Op        string         `json:"op,omitempty"`
	Direction vocab.CopyKind `json:"direction,omitempty"`
	Memory    vocab.MemKind  `json:"memory,omitempty"`
	Wait      string         `json:"wait,omitempty"`
	SizeClass string         `json:"sizeClass,omitempty"`
}

// ReplayMisfit is the JSON of replay.Misfit.
type ReplayMisfit struct {
	What string `json:"what"`
	ReplayClass
	Count     int   `json:"count"`
	Late      int   `json:"late"`
	LateNs    int64 `json:"lateNs"`
	EarlyNs   int64 `json:"earlyNs"`
	WorstNs   int64 `json:"worstNs"`
	WorstCorr int64 `json:"worstCorrelationId"`
}

// Replay is the JSON of audit.Replay.
type Replay struct {
	PinBy       replay.PinBy    `json:"pinBy"`
	PinByFrom   PinChooser      `json:"pinByFrom"`
	Recosted    int             `json:"recosted"`
	Uncosted    int             `json:"uncosted"`
	Kept        int             `json:"kept"`
	Forced      int             `json:"forced"`
	Costs       []ReplayCostUse `json:"costs"`
	Assumptions []Assumption    `json:"assumptions"`
	Misfits     []ReplayMisfit  `json:"misfits"`
	Shown       *PinShown       `json:"pinShown,omitempty"`
}

// PinShown is the JSON of audit.PinShown.
type PinShown struct {
	By      replay.PinBy  `json:"pinBy"`
	Clue    audit.PinClue `json:"clue"`
	Thread  string        `json:"thread,omitempty"`
	Calls   int           `json:"calls,omitempty"`
	Allocs  int           `json:"allocs"`
	AllocNs int64         `json:"allocNs"`
	AmongNs int64         `json:"amongNs"`
}

// APITime is the JSON of audit.APITime.
type APITime struct {
	API    string `json:"api"`
	Calls  int64  `json:"calls"`
	HostNs int64  `json:"hostNs"`
}

// PinAllocs is the JSON of audit.PinAllocs.
type PinAllocs struct {
	Calls  int64     `json:"calls"`
	HostNs int64     `json:"hostNs"`
	ByAPI  []APITime `json:"byApi"`
}

// Flagged is the JSON of audit.Flagged.
type Flagged struct {
	PID      int64   `json:"pid"`
	Start    int64   `json:"start"`
	Duration int64   `json:"duration"`
	MB       float64 `json:"mb"`
	// Sized is not written: a row read back is set beside nothing.
	Sized bool `json:"-"`
}

// RuleComparison is the JSON of audit.RuleComparison.
type RuleComparison struct {
	Rule      string `json:"rule"`
	Available bool   `json:"available"`
	Source    string `json:"source,omitempty"`
	// SourceKind is how the rule's copies were had, Source in words.
	SourceKind RuleSourceKind `json:"sourceKind,omitempty"`
	Note       string         `json:"note,omitempty"`
	RuleCount  int            `json:"ruleCount"`
	AuditCount int            `json:"auditCount"`
	Both       int            `json:"both"`
	Agree      bool           `json:"agree"`
	RuleMB     float64        `json:"ruleMB,omitempty"`
	AuditMB    float64        `json:"auditMB,omitempty"`
	// SizesDiffer and Sizes are the copies both list that the rule
	// gives other sizes than the records do, and which sizes.
	SizesDiffer int64      `json:"sizesDiffer,omitempty"`
	Sizes       []SizeDiff `json:"sizes,omitempty"`
	OnlyRule    []Flagged  `json:"onlyRule"`
	OnlyAudit   []Evidence `json:"onlyAudit"`
}

// SizeDiff is the JSON of audit.SizeDiff.
type SizeDiff struct {
	RuleMB  float64 `json:"ruleMB"`
	AuditMB float64 `json:"auditMB"`
	Copies  int64   `json:"copies"`
}

// Tracing is the JSON of coverage.Tracing.
type Tracing struct {
	Known      bool   `json:"known"`
	CUDA       bool   `json:"cuda"`
	NVTX       bool   `json:"nvtx"`
	OSRT       bool   `json:"osrt"`
	GraphTrace string `json:"graphTrace,omitempty"`
	Backtraces bool   `json:"backtraces"`
	PageFaults bool   `json:"pageFaults"`
}

// Messages is the JSON of coverage.Messages.
type Messages struct {
	Severity    string `json:"severity"`
	Count       int    `json:"count"`
	First       string `json:"first"`
	FirstDetail string `json:"firstDetail,omitempty"`
}

// FamilyCount is the JSON of coverage.FamilyCount.
type FamilyCount struct {
	Family string `json:"family"`
	Events int64  `json:"events"`
}

// Migration is the JSON of coverage.Migration.
type Migration struct {
	Direction vocab.CopyKind `json:"direction"`
	Cause     string         `json:"cause"`
	Count     int64          `json:"count"`
	Bytes     int64          `json:"bytes"`
	GPUNs     int64          `json:"gpuNs"`
}

// Coverage is the JSON of coverage.Coverage.
type Coverage struct {
	Tracing       Tracing       `json:"tracing"`
	Messages      []Messages    `json:"nsysMessages"`
	NotAll        []string      `json:"notAllCollected"`
	None          []string      `json:"noneCollected"`
	Collected     []FamilyCount `json:"collected"`
	ImportError   string        `json:"importError,omitempty"`
	Dropped       string        `json:"dropped,omitempty"`
	GraphLaunches int64         `json:"graphLaunches"`
	Graphs        int           `json:"graphs"`
	GraphGPUNs    int64         `json:"graphGpuNs"`
	NodeLaunches  int64         `json:"nodeLaunches"`
	NodeCopies    int64         `json:"nodeCopies"`
	NodeBytes     int64         `json:"nodeBytes"`
	Migrations    []Migration   `json:"migrations"`
	ZeroKernels   int64         `json:"zeroKernels,omitempty"`
	FirstZero     *OpRef        `json:"firstZeroKernel,omitempty"`
	ZeroCalls     int64         `json:"zeroCopyCalls,omitempty"`
	FirstZeroCall *OpRef        `json:"firstZeroCopyCall,omitempty"`
}

// OpRef is the JSON of coverage.OpRef.
type OpRef struct {
	Name string `json:"name,omitempty"`
	Corr int64  `json:"correlationId"`
	Row  int    `json:"row,omitempty"`
}

// Audit is the JSON of audit.Audit.
type Audit struct {
	Capture     string    `json:"capture"`
	Format      string    `json:"format"`
	Files       []string  `json:"files,omitempty"`
	GPU         string    `json:"gpu,omitempty"`
	NsysVersion string    `json:"nsysVersion,omitempty"`
	Framework   Detection `json:"framework"`
	Regions     []Region  `json:"regions"`
	Gate        *Gate     `json:"failAbove,omitempty"`
	APICalls    int64     `json:"apiCalls"`
	SpanNs      int64     `json:"spanNs"`
	SpanFrom    string    `json:"spanFrom"`
	// SessionStartNs is when the capture's session started (ns since
	// 1970, UTC), where it records one; SessionStartFault why the start
	// it records cannot be a session's. Both are left out where the
	// capture has none (a CSV folder), as an audit's JSON written before
	// they were carried leaves them out.
	SessionStartNs    int64  `json:"sessionStartNs,omitempty"`
	SessionStartFault string `json:"sessionStartFault,omitempty"`
	// Job is the job the capture names, a variable and a digest of its
	// value (audit.Audit.Job); left out where it names none.
	Job          string          `json:"job,omitempty"`
	Copies       int64           `json:"copies"`
	Unmatched    int64           `json:"copiesWithoutCall"`
	Memsets      int64           `json:"memsetsApart"`
	Totals       []Total         `json:"totals"`
	Classes      []*Class        `json:"classes"`
	TopOffenders []*Class        `json:"topOffenders"`
	CallSites    *CallSites      `json:"callSites,omitempty"`
	Findings     []Finding       `json:"findings"`
	Prediction   *Prediction     `json:"prediction"`
	Replay       *Replay         `json:"replay"`
	PinAllocs    PinAllocs       `json:"pinAllocs"`
	NVIDIA       *RuleComparison `json:"nvidiaRule,omitempty"`
	Missing      []records.Gap   `json:"missing,omitempty"`
	Coverage     *Coverage       `json:"coverage,omitempty"`
	// Diagnostics and Exposures are the audit's diagnostics and what the
	// capture files reveal beyond the run, in words.
	Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
	Exposures   []string     `json:"exposures"`
}

// Diagnostic is a diagnostic in words: its code, its level and its
// message.
type Diagnostic struct {
	Code    diag.Code  `json:"code"`
	Level   diag.Level `json:"level"`
	Message string     `json:"message"`
}

// Tolerance is the JSON of audit.Tolerance.
type Tolerance struct {
	Model     float64 `json:"model"`
	Fit       float64 `json:"fit"`
	NoiseLow  float64 `json:"noiseLow"`
	NoiseHigh float64 `json:"noiseHigh"`
}

// RegionCheck is the JSON of audit.RegionCheck.
type RegionCheck struct {
	Region
	AfterName       string        `json:"afterName"`
	Judged          bool          `json:"judged"`
	AfterInstances  int           `json:"afterInstances"`
	AfterMedianMs   float64       `json:"afterMedianMs"`
	AfterSpanMs     float64       `json:"afterSpanMs"`
	AfterOverlap    float64       `json:"afterOverlap"`
	AfterCopyCallMs float64       `json:"afterCopyCallMs"`
	AfterOutside    ReplayOutside `json:"afterOutside"`
	LoadingMs       float64       `json:"loadingMs,omitempty"`
	AfterLoadingMs  float64       `json:"afterLoadingMs,omitempty"`
	BoundLowMs      float64       `json:"boundLowMs"`
	BoundHighMs     float64       `json:"boundHighMs"`
	Tolerance       Tolerance     `json:"tolerance"`
	Faster          bool          `json:"faster"`
	Verdict         vocab.Verdict `json:"verdict,omitempty"`
	Why             audit.Why     `json:"why"`
	WideBy          string        `json:"wideBy,omitempty"`
}

// Unseen is the JSON of audit.Unseen.
type Unseen struct {
	Framework    framework.Name `json:"framework"`
	PinnedHtoD   int64          `json:"pinnedHtod"`
	PageableHtoD int64          `json:"pageableHtod"`
}

// Fix is the JSON of audit.Fix.
type Fix struct {
	Before Total `json:"before"`
	After  Total `json:"after"`
	Made   bool  `json:"made"`
}

// ClassChange is the JSON of audit.ClassChange.
type ClassChange struct {
	Class         string            `json:"class"`
	Before        Total             `json:"before"`
	AfterPageable Total             `json:"afterPageable"`
	AfterPinned   Total             `json:"afterPinned"`
	Status        audit.ClassStatus `json:"status"`
}

// Pair is the JSON of audit.Pair.
type Pair struct {
	Label    string `json:"label"`
	BeforeNs int64  `json:"beforeNs"`
	AfterNs  int64  `json:"afterNs"`
}

// Check is the JSON of audit.Check.
type Check struct {
	Before               string            `json:"before"`
	After                string            `json:"after"`
	Verdict              vocab.Verdict     `json:"verdict"`
	Regions              []RegionCheck     `json:"regions"`
	Match                map[string]string `json:"match,omitempty"`
	Unseen               *Unseen           `json:"unseen,omitempty"`
	Fix                  Fix               `json:"fix"`
	HtoDBeforeNs         int64             `json:"htodBeforeNs"`
	HtoDAfterNs          int64             `json:"htodAfterNs"`
	HtoDBytesBefore      int64             `json:"htodBytesBefore"`
	HtoDBytesAfter       int64             `json:"htodBytesAfter"`
	BytesChange          float64           `json:"bytesChange"`
	PredictedAfterNs     int64             `json:"predictedAfterNs"`
	PredictedAfterLowNs  int64             `json:"predictedAfterLowNs"`
	PredictedAfterHighNs int64             `json:"predictedAfterHighNs"`
	PredictedSavedNs     int64             `json:"predictedSavedNs"`
	SavedNs              int64             `json:"savedNs"`
	PredictionSources    []string          `json:"predictionSources"`
	PageableBefore       Total             `json:"pageableHtodBefore"`
	PageableAfter        Total             `json:"pageableHtodAfter"`
	PageableOtherAfter   Total             `json:"pageableOtherAfter"`
	PinAllocsBefore      PinAllocs         `json:"pinAllocsBefore"`
	PinAllocsAfter       PinAllocs         `json:"pinAllocsAfter"`
	Classes              []ClassChange     `json:"classes"`
	Pairs                []Pair            `json:"pairs"`
}
