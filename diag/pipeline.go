package diag

// The diagnostics the pipeline adds beside an evaluation's or an audit's
// own: what the capture's folder and the run's facts say (check.Enrich),
// what the loader chose for the user, and a failed exposure scan.

// Codes of the pipeline's diagnostics.
const (
	CodeNsysRule   Code = "nsys-analyze"
	CodePCIe       Code = "pcie-link"
	CodeResident   Code = "resident-vs-device-copy"
	CodeScanFailed Code = "capture-scan-failed"
	// CodeInputSubstituted marks a choice the loader made for the user,
	// such as reading the SQLite export beside a report nsys could not
	// export; its detail is the loader's Note.
	CodeInputSubstituted Code = "input-substituted"
	CodeSharedGPU        Code = "shared-gpu"
	// CodeUncopiedCalls: a few copy calls of the trace have no copy record
	// (capture.UncopiedShare); more refuse the audit.
	CodeUncopiedCalls Code = "copy-calls-uncopied"
	CodeTraceLost     Code = "trace-lost"
)

// NsysRule sets NVIDIA's cuda_memcpy_async rule (its CSV File) beside the
// reading of part 2: of the Flagged copies, how many are the timed
// pageable and pinned calls, how many other calls of the program's thread
// and how many match none. Agrees is the outcome; ByCopyRecords says that
// it agrees with the copy records, which show the pinned group copying
// from pageable memory too.
type NsysRule struct {
	Rule, File            string
	Flagged               int
	PageableHit, Pageable int
	PinnedHit, Pinned     int
	Other, Unmatched      int
	Agrees, ByCopyRecords bool
}

// NsysRuleAlone: NVIDIA's rule flags copies the result has nothing to set
// beside: no part 2 groups, or (NoCopyRecords) no GPU copy records to
// match the rule's copies with.
type NsysRuleAlone struct {
	Rule, File    string
	Flagged       int
	NoCopyRecords bool
}

// NsysRuleUnread: NVIDIA's rule's CSV could not be read; Err is the
// reader's error.
type NsysRuleUnread struct{ Err string }

// LinkShare is the pinned bandwidth of one direction at the sweep's
// largest size against the link's rating.
type LinkShare struct {
	Dir  string // h2d or d2h
	GBps float64
}

// PCIeLink is the GPU's PCIe link, its rating, and how close pinned copies
// came to it.
type PCIeLink struct {
	GenMax, WidthMax, GenNow, WidthNow int
	RatedGBps                          float64
	Pinned                             []LinkShare
	PinnedBytes                        int64
}

// ResidentVsCopy sets the device-resident kernel's bandwidth (from its
// source of numbers) beside the device-to-device copy bandwidth of the
// same run.
type ResidentVsCopy struct {
	KernelGBps float64
	From       string
	DeviceGBps float64
}

// ScanFailed: a capture file could not be scanned for what it exposes.
type ScanFailed struct{ File, Err string }

// SharedGPU: other work used the run's GPU around the profile. GPU is its
// index, -1 unknown; Seen is the run's own account of what was seen
// (runinfo.Sharing.Seen).
type SharedGPU struct {
	GPU  int
	Seen string
}

// TraceLoss is what a capture's CUDA trace lost although nsys traced CUDA
// and the program ran to the end: the whole API trace (NoTrace, with what
// the export lacks), every call (NoCalls), or calls the program timed
// (Short).
type TraceLoss struct {
	NoTrace bool
	Lacks   string
	NoCalls bool
	Short   []CallShortfall
}

// CallShortfall is an API the trace holds fewer calls of than the program
// timed.
type CallShortfall struct {
	API         string
	Held, Timed int
}

// TraceLost explains a lost or truncated trace: another profiler probably
// took it (nsys traced with Trace); Shared when other work was seen on the
// GPU; the claims resting on the program's own numbers only (Own) and
// those unavailable without the trace (None).
type TraceLost struct {
	Loss      TraceLoss
	Trace     string
	Shared    bool
	Own, None []string
}

// Code is the detail's code.
func (NsysRule) Code() Code       { return CodeNsysRule }
func (NsysRuleAlone) Code() Code  { return CodeNsysRule }
func (NsysRuleUnread) Code() Code { return CodeNsysRule }
func (PCIeLink) Code() Code       { return CodePCIe }
func (ResidentVsCopy) Code() Code { return CodeResident }
func (ScanFailed) Code() Code     { return CodeScanFailed }
func (SharedGPU) Code() Code      { return CodeSharedGPU }
func (TraceLost) Code() Code      { return CodeTraceLost }

// MapPaths passes the error's text through f.
func (d NsysRuleUnread) MapPaths(f func(string) string) Detail { d.Err = f(d.Err); return d }

// MapPaths passes the file and the error's text through f.
func (d ScanFailed) MapPaths(f func(string) string) Detail {
	d.File, d.Err = f(d.File), f(d.Err)
	return d
}

// MapPaths passes what the export lacks through f.
func (d TraceLost) MapPaths(f func(string) string) Detail { d.Loss.Lacks = f(d.Loss.Lacks); return d }
