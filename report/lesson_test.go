package report

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/predictions"
)

// toyRow is a toy prediction's one row per source.
type toyRow struct {
	From  predictions.Source `json:"from"`
	Calls int                `json:"calls"`
}

// toyCalls is the least number of CUDA calls the toy claims the trace holds.
const toyCalls = 100

// toyPart is a fifth prediction made only of what a Part declares: a claim
// whose statement uses its bound, a reading of the capture, rows and a
// table. Nothing else in the tree knows of it.
func toyPart() *predictions.Part {
	calls := predictions.NewSlot[int]("the trace's CUDA calls")
	rows := predictions.RowKey[toyRow]{Name: "toyCalls"}
	compare := predictions.Comparison{Relation: predictions.AtLeast, Bound: toyCalls}
	return &predictions.Part{
		ID:    5,
		Topic: "How many CUDA calls the program makes",
		Claims: []predictions.ClaimSpec{{
			ID:        "5.calls",
			Statement: predictions.Say("the program's thread makes at least ", predictions.Plain(toyCalls), " CUDA calls"),
			Unit:      predictions.Say("calls"),
			Compare:   compare,
			Eval: func(n *predictions.Numbers) predictions.Outcome {
				c, why := calls.Get(n)
				if why != nil {
					return predictions.UnavailableOutcome(why)
				}
				v := float64(c)
				verdict := predictions.Died
				if compare.Holds(v) {
					verdict = predictions.Held
				}
				return predictions.Outcome{Verdict: verdict, Measured: &v, Bound: toyCalls,
					Evidence: []predictions.Evidence{n.Line("CUDA API trace", nil, predictions.Quantity{What: predictions.Say("CUDA calls read"), Value: v})}}
			},
		}},
		Read: func(in *predictions.Reading, n *predictions.Numbers) {
			if in.From != predictions.SourceTrace {
				calls.Set(n, 0, predictions.NoCalls{})
				return
			}
			calls.Set(n, len(in.Capture.Calls), nil)
		},
		Rows: rows,
		AddRows: func(n *predictions.Numbers, r *predictions.Result) {
			if c, why := calls.Get(n); why == nil {
				rows.Add(r, toyRow{From: n.From, Calls: c})
			}
		},
		Tables: func(r *predictions.Result) []predictions.Table {
			t := predictions.Table{Title: "Part 5: CUDA calls per source", Columns: []predictions.Column{{Head: "source"}, {Head: "calls", Right: true}},
				Missing: "The input has no trace."}
			for _, row := range rows.Of(r) {
				t.From = row.From
				t.Rows = append(t.Rows, []predictions.Cell{{Kind: predictions.CellWord, Word: string(row.From)},
					{Kind: predictions.CellWord, Word: strconv.Itoa(row.Calls)}})
			}
			return []predictions.Table{t}
		},
	}
}

// TestFifthPrediction registers a toy fifth prediction and finds it, with
// its claim, verdict, rows and table, in text, JSON and Markdown, although
// no renderer names it.
func TestFifthPrediction(t *testing.T) {
	remove, err := predictions.Lesson.Register(toyPart())
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	if _, err := predictions.Lesson.Register(toyPart()); err == nil {
		t.Error("a second prediction 5 was registered")
	}
	r := evaluate(t, "../testdata/captures/h200-pinned/pinned.sqlite")
	c := r.Claim("5.calls")
	if c == nil || c.Verdict != predictions.Held || c.Measured == nil || *c.Measured < toyCalls {
		t.Fatalf("5.calls %+v", c)
	}
	if p := r.Predictions[len(r.Predictions)-1]; p.ID != 5 || p.Verdict != predictions.Held {
		t.Errorf("last prediction %+v", p)
	}

	var text bytes.Buffer
	if err := Write(&text, FormatText, []*predictions.Result{r}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"5.calls     held", "the program's thread makes at least 100 CUDA calls",
		"prediction 5  held      How many CUDA calls the program makes: 5.calls held", "CUDA calls read: "} {
		if !strings.Contains(squash(text.String()), squash(want)) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}

	var js bytes.Buffer
	if err := Write(&js, FormatJSON, []*predictions.Result{r}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	var env struct {
		Results []struct {
			Claims []struct {
				ID, Statement, Verdict string
				Measured               float64
			} `json:"claims"`
			Predictions []struct {
				ID      int
				Verdict string
			} `json:"predictions"`
			ToyCalls []toyRow `json:"toyCalls"`
		} `json:"results"`
	}
	if err := json.Unmarshal(js.Bytes(), &env); err != nil {
		t.Fatal(err)
	}
	res := env.Results[0]
	last := res.Claims[len(res.Claims)-1]
	if last.ID != "5.calls" || last.Verdict != "held" || last.Statement != "the program's thread makes at least 100 CUDA calls" || last.Measured != *c.Measured {
		t.Errorf("JSON claim %+v", last)
	}
	if p := res.Predictions[len(res.Predictions)-1]; p.ID != 5 || p.Verdict != "held" {
		t.Errorf("JSON prediction %+v", p)
	}
	if len(res.ToyCalls) != 1 || res.ToyCalls[0].From != predictions.SourceTrace || float64(res.ToyCalls[0].Calls) != *c.Measured {
		t.Errorf("JSON rows %+v", res.ToyCalls)
	}

	var md bytes.Buffer
	if err := Write(&md, FormatMarkdown, []*predictions.Result{r}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### Part 5: CUDA calls per source", "| source | calls |", "| trace | " + strconv.Itoa(int(*c.Measured)) + " |",
		"5. **How many CUDA calls the program makes: held.** `5.calls` held: the program's thread makes at least 100 CUDA calls"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	remove()
	if predictions.Lesson.Part(5) != nil || len(predictions.Lesson.Parts()) != 4 {
		t.Errorf("the toy is still registered: %d parts", len(predictions.Lesson.Parts()))
	}
}
