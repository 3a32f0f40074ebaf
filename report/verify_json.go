package report

import (
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/predictions"
)

// The JSON form of verify's results: transfer types made from the typed
// result, their words made here as every other renderer's are. Field
// names and order are those docs/output.schema.json describes.

// jsonResult is one input's verdicts.
type jsonResult struct {
	Input          jsonInput                   `json:"input"`
	Claims         []jsonClaim                 `json:"claims"`
	Predictions    []jsonPrediction            `json:"predictions"`
	Exercise       jsonExercise                `json:"exercise"`
	Diagnostics    []jsonDiagnostic            `json:"diagnostics"`
	Copies         []predictions.CopyRow       `json:"copies"`
	Async          []predictions.AsyncRow      `json:"async"`
	Kernels        []jsonKernelRow             `json:"kernels"`
	AsyncCalls     []predictions.CallDurations `json:"asyncCalls"`
	DeviceCopyGBps float64                     `json:"deviceCopyGBps,omitempty"`
	DeviceCopyFrom string                      `json:"deviceCopyFrom,omitempty"`
}

type jsonInput struct {
	Path          string         `json:"path"`
	Format        string         `json:"format"`
	Files         []string       `json:"files,omitempty"`
	GPU           string         `json:"gpu,omitempty"`
	ProgramSource string         `json:"programSource,omitempty"`
	Thread        string         `json:"thread,omitempty"`
	SetAside      []jsonSetAside `json:"setAside,omitempty"`
}

type jsonSetAside struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

type jsonClaim struct {
	ID             string               `json:"id"`
	Prediction     int                  `json:"prediction"`
	Statement      string               `json:"statement"`
	Verdict        string               `json:"verdict"`
	Measured       *float64             `json:"measured"`
	Bound          float64              `json:"bound"`
	Comparison     string               `json:"comparison"`
	Unit           string               `json:"unit"`
	From           string               `json:"from,omitempty"`
	Evidence       []string             `json:"evidence"`
	Sources        []jsonSourceValue    `json:"sources,omitempty"`
	Reason         string               `json:"reason,omitempty"`
	Control        bool                 `json:"control,omitempty"`
	EvidenceDetail []jsonEvidenceDetail `json:"evidenceDetail,omitempty"`
}

type jsonSourceValue struct {
	Source   string   `json:"source"`
	Verdict  string   `json:"verdict"`
	Measured *float64 `json:"measured"`
	Bound    float64  `json:"bound,omitempty"`
	Reason   string   `json:"reason,omitempty"`
}

// jsonKernelRow is one row of part 3, where its bytes per launch came
// from in words.
type jsonKernelRow struct {
	From           string  `json:"from"`
	Variant        string  `json:"variant"`
	Bytes          int64   `json:"bytes"`
	BytesFrom      string  `json:"bytesFrom,omitempty"`
	MsPerLaunch    float64 `json:"msPerLaunch"`
	GBps           float64 `json:"gbps"`
	Runs           int     `json:"runs,omitempty"`
	CorrelationIDs []int64 `json:"correlationIds,omitempty"`
}

type jsonPrediction struct {
	ID        int      `json:"id"`
	Verdict   string   `json:"verdict"`
	Claims    []string `json:"claims"`
	Unchecked []string `json:"unchecked,omitempty"`
}

type jsonExercise struct {
	H2DRatio       *float64             `json:"h2dRatio"`
	D2HRatio       *float64             `json:"d2hRatio"`
	Answer         string               `json:"answer,omitempty"`
	Rule           string               `json:"rule"`
	Verdict        string               `json:"verdict"`
	From           string               `json:"from,omitempty"`
	Evidence       []string             `json:"evidence,omitempty"`
	Reason         string               `json:"reason,omitempty"`
	EvidenceDetail []jsonEvidenceDetail `json:"evidenceDetail,omitempty"`
}

// jsonEvidenceDetail is one evidence line typed: where its numbers were
// read and the records behind them, beside the line's words.
type jsonEvidenceDetail struct {
	Source  string        `json:"source"`
	Table   string        `json:"table,omitempty"`
	File    string        `json:"file,omitempty"`
	Records []jsonRecords `json:"records,omitempty"`
	Text    string        `json:"text"`
}

type jsonRecords struct {
	Group string    `json:"group"`
	Table string    `json:"table"`
	Rows  *jsonSpan `json:"rows,omitempty"`
	Corr  *jsonSpan `json:"corr,omitempty"`
	Count int       `json:"count"`
}

type jsonSpan struct {
	First int64 `json:"first"`
	Last  int64 `json:"last"`
}

type jsonDiagnostic struct {
	Code    string `json:"code"`
	Level   string `json:"level"`
	Message string `json:"message"`
}

// diagnosticsJSON is the JSON form of diagnostics: never null.
func diagnosticsJSON(ds []diag.Diagnostic) []jsonDiagnostic {
	out := []jsonDiagnostic{}
	for _, d := range diagViews(ds) {
		out = append(out, jsonDiagnostic{Code: string(d.Code), Level: string(d.Level), Message: d.Message})
	}
	return out
}

// resultJSON is the JSON form of one result.
func resultJSON(r *predictions.Result) jsonResult {
	in := r.Input
	j := jsonResult{
		Input: jsonInput{Path: in.Path, Format: string(in.Format), Files: in.Files, GPU: in.GPU,
			ProgramSource: in.ProgramSource},
		Claims: []jsonClaim{}, Predictions: []jsonPrediction{}, Diagnostics: []jsonDiagnostic{},
		Copies: r.Copies, Async: r.Async, Kernels: []jsonKernelRow{}, AsyncCalls: r.AsyncCalls,
		DeviceCopyGBps: r.DeviceCopyGBps, DeviceCopyFrom: deviceCopyFrom(r.DeviceCopyFrom),
	}
	for _, k := range r.Kernels {
		j.Kernels = append(j.Kernels, jsonKernelRow{From: string(k.From), Variant: string(k.Variant), Bytes: k.Bytes,
			BytesFrom: kernelBytesFrom(k.BytesFrom), MsPerLaunch: k.MsPerLaunch, GBps: k.GBps, Runs: k.Runs, CorrelationIDs: k.CorrelationIDs})
	}
	if in.Thread != nil {
		j.Input.Thread = threadID(*in.Thread)
	}
	for _, s := range in.SetAside {
		j.Input.SetAside = append(j.Input.SetAside, jsonSetAside{Path: s.Path, Reason: s.Reason})
	}
	for i := range r.Claims {
		j.Claims = append(j.Claims, claimJSON(&r.Claims[i]))
	}
	for _, p := range r.Predictions {
		jp := jsonPrediction{ID: p.ID, Verdict: string(p.Verdict), Claims: p.Claims}
		for _, u := range p.Unchecked {
			jp.Unchecked = append(jp.Unchecked, uncheckedWords(u))
		}
		j.Predictions = append(j.Predictions, jp)
	}
	ex := r.Exercise
	j.Exercise = jsonExercise{H2DRatio: ex.H2DRatio, D2HRatio: ex.D2HRatio, Answer: string(ex.Answer), Rule: exerciseRule(),
		Verdict: string(ex.Verdict), From: string(ex.From), Reason: sourceWhys(ex.Why),
		Evidence: evidenceJSON(ex.Evidence), EvidenceDetail: evidenceDetailJSON(ex.Evidence)}
	j.Diagnostics = diagnosticsJSON(r.Diagnostics)
	return j
}

func claimJSON(c *predictions.Claim) jsonClaim {
	j := jsonClaim{ID: c.ID, Prediction: c.Prediction, Statement: c.Statement, Verdict: string(c.Verdict),
		Measured: c.Measured, Bound: c.Compare.Bound, Comparison: relationWord(c.Compare), Unit: c.Unit, From: string(c.From),
		Evidence: evidenceJSON(c.Evidence), Reason: sourceWhys(c.Why), Control: c.Control,
		EvidenceDetail: evidenceDetailJSON(c.Evidence)}
	if j.Evidence == nil {
		j.Evidence = []string{}
	}
	for _, s := range c.Sources {
		j.Sources = append(j.Sources, jsonSourceValue{Source: string(s.Source), Verdict: string(s.Verdict), Measured: s.Measured, Bound: s.Bound, Reason: whyWords(s.Why)})
	}
	return j
}

// evidenceJSON is each evidence line as "source: words".
func evidenceJSON(ev []predictions.Evidence) []string {
	if len(ev) == 0 {
		return nil
	}
	out := make([]string, len(ev))
	for i, e := range ev {
		out[i] = evidenceLine(e)
	}
	return out
}

func evidenceDetailJSON(ev []predictions.Evidence) []jsonEvidenceDetail {
	if len(ev) == 0 {
		return nil
	}
	out := make([]jsonEvidenceDetail, len(ev))
	for i, e := range ev {
		d := jsonEvidenceDetail{Source: string(e.Source), Table: e.Table, File: e.File, Text: evidenceWords(e)}
		for _, r := range e.Records {
			jr := jsonRecords{Group: groupName(r.Group), Table: r.Table, Count: r.Count}
			if r.Rows != nil {
				jr.Rows = &jsonSpan{First: r.Rows.First, Last: r.Rows.Last}
			}
			if r.Corr != nil {
				jr.Corr = &jsonSpan{First: r.Corr.First, Last: r.Corr.Last}
			}
			d.Records = append(d.Records, jr)
		}
		out[i] = d
	}
	return out
}

// evidenceLine is an evidence line as text and JSON show it: its source,
// then its words.
func evidenceLine(e predictions.Evidence) string { return string(e.Source) + ": " + evidenceWords(e) }
