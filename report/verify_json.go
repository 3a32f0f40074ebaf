package report

import (
	"bytes"
	"encoding/json"

	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/predictions"
)

// The JSON form of verify's results: transfer types made from the typed
// result, their words made here as every other renderer's are. Field
// names and order are those docs/output.schema.json describes.

// jsonResult is one input's verdicts: its fields in order, each part's
// rows under the part's name after the diagnostics.
type jsonResult struct {
	Input          jsonInput
	Claims         []jsonClaim
	Predictions    []jsonPrediction
	Exercise       jsonExercise
	Reference      *jsonReference
	Diagnostics    []jsonDiagnostic
	Rows           []jsonRows
	DeviceCopyGBps float64
	DeviceCopyFrom string
}

// jsonRows is one part's rows under its name.
type jsonRows struct {
	Name string
	Rows any
}

// MarshalJSON writes the result's fields in order, the parts' rows among
// them, without HTML escaping as every output is.
func (j jsonResult) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	b.WriteByte('{')
	first := true
	field := func(name string, v any) error {
		if !first {
			b.WriteByte(',')
		}
		first = false
		if err := enc.Encode(name); err != nil {
			return err
		}
		b.WriteByte(':')
		return enc.Encode(v)
	}
	for _, f := range []struct {
		name string
		v    any
	}{{"input", j.Input}, {"claims", j.Claims}, {"predictions", j.Predictions}, {"exercise", j.Exercise}, {"reference", j.Reference}, {"diagnostics", j.Diagnostics}} {
		if f.name == "reference" && j.Reference == nil {
			continue
		}
		if err := field(f.name, f.v); err != nil {
			return nil, err
		}
	}
	for _, rs := range j.Rows {
		if err := field(rs.Name, rs.Rows); err != nil {
			return nil, err
		}
	}
	if j.DeviceCopyGBps != 0 {
		if err := field("deviceCopyGBps", j.DeviceCopyGBps); err != nil {
			return nil, err
		}
	}
	if j.DeviceCopyFrom != "" {
		if err := field("deviceCopyFrom", j.DeviceCopyFrom); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// rowsJSON is a part's rows as JSON shows them: part 3's with where their
// bytes per launch came from in words, every other part's as they are.
func rowsJSON(rows any) any {
	ks, ok := rows.([]predictions.KernelRow)
	if !ok {
		return rows
	}
	out := []jsonKernelRow{}
	for _, k := range ks {
		out = append(out, jsonKernelRow{From: string(k.From), Variant: string(k.Variant), Bytes: k.Bytes,
			BytesFrom: kernelBytesFrom(k.BytesFrom), MsPerLaunch: k.MsPerLaunch, GBps: k.GBps, Runs: k.Runs, CorrelationIDs: k.CorrelationIDs})
	}
	return out
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
	Interval       jsonInterval         `json:"interval"`
	Unit           string               `json:"unit"`
	From           string               `json:"from,omitempty"`
	Evidence       []string             `json:"evidence"`
	Sources        []jsonSourceValue    `json:"sources,omitempty"`
	Reason         string               `json:"reason,omitempty"`
	Control        bool                 `json:"control,omitempty"`
	EvidenceDetail []jsonEvidenceDetail `json:"evidenceDetail,omitempty"`
}

// jsonInterval is the span of measured values a claim's comparison holds
// for: low and high, each absent where the span is open.
type jsonInterval struct {
	Low  *float64 `json:"low,omitempty"`
	High *float64 `json:"high,omitempty"`
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

// jsonReference is the exercise's check against a reference: both
// host-to-device ratios at the exercise's size with their sources, how far
// apart (the input's over the reference's, less one), the tolerance, the
// input's pinned rows slower than their pageable ones, and the verdict in
// words.
type jsonReference struct {
	Reference         string        `json:"reference"`
	GPU               string        `json:"gpu,omitempty"`
	Verdict           string        `json:"verdict"`
	H2DRatio          *float64      `json:"h2dRatio"`
	From              string        `json:"from,omitempty"`
	ReferenceH2DRatio *float64      `json:"referenceH2dRatio"`
	ReferenceFrom     string        `json:"referenceFrom,omitempty"`
	Deviation         *float64      `json:"deviation"`
	Tolerance         float64       `json:"tolerance"`
	PinnedSlower      []jsonSlowRow `json:"pinnedSlower,omitempty"`
	Text              string        `json:"text"`
}

// jsonSlowRow is one direction's row at the exercise's size whose pinned
// copy is slower than its pageable one.
type jsonSlowRow struct {
	Direction  string  `json:"direction"`
	From       string  `json:"from"`
	PinnedMs   float64 `json:"pinnedMs"`
	PageableMs float64 `json:"pageableMs"`
}

// referenceJSON is the JSON form of a check against a reference.
func referenceJSON(rc *predictions.ReferenceCheck) *jsonReference {
	if rc == nil {
		return nil
	}
	j := &jsonReference{Reference: rc.Reference, GPU: rc.GPU, Verdict: string(rc.Verdict), H2DRatio: rc.Ratio, From: string(rc.From),
		ReferenceH2DRatio: rc.RefRatio, ReferenceFrom: string(rc.RefFrom), Deviation: rc.Deviation,
		Tolerance: predictions.ReferenceTolerance, Text: referenceWords(rc)}
	for _, sr := range rc.Slower {
		j.PinnedSlower = append(j.PinnedSlower, jsonSlowRow{Direction: string(sr.Dir), From: string(sr.From), PinnedMs: sr.PinnedMs, PageableMs: sr.PageableMs})
	}
	return j
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
		out = append(out, jsonDiagnostic{Code: string(d.Code), Level: string(d.Level), Message: d.Full()})
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
		DeviceCopyGBps: r.DeviceCopyGBps, DeviceCopyFrom: deviceCopyFrom(r.DeviceCopyFrom),
	}
	for _, rs := range r.RowSets() {
		j.Rows = append(j.Rows, jsonRows{Name: rs.Name, Rows: rowsJSON(rs.Rows)})
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
	j.Reference = referenceJSON(r.Reference)
	j.Diagnostics = diagnosticsJSON(r.Diagnostics)
	return j
}

func claimJSON(c *predictions.Claim) jsonClaim {
	j := jsonClaim{ID: c.ID, Prediction: c.Prediction, Statement: wordsText(c.Statement), Verdict: string(c.Verdict),
		Measured: c.Measured, Bound: c.Compare.Bound, Comparison: relationWord(c.Compare), Unit: wordsText(c.Unit), From: string(c.From),
		Interval: jsonInterval{Low: c.Compare.Interval().Low, High: c.Compare.Interval().High},
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
