package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/nsyscheck/nsyscheck/predictions"
)

const evidenceWidth = 110

// versus renders "measured comparison bound" for a claim.
func versus(measured *float64, comparison string, bound float64) string {
	if measured == nil {
		return "-"
	}
	if comparison == "within 2x of" {
		return fmt.Sprintf("%s within [%s, %s]", num(*measured), num(bound/predictions.LossFactor), num(bound*predictions.LossFactor))
	}
	return fmt.Sprintf("%s %s %s", num(*measured), comparison, num(bound))
}

// claimLine is one claim's evidence in a line: the reason when unavailable, else
// the deciding source's last evidence line.
func claimLine(c *predictions.Claim) string {
	s := c.Reason
	if c.Verdict != predictions.Unavailable {
		for _, e := range c.Evidence {
			if e.Source == c.From {
				s = e.String()
			}
		}
	}
	return clip(s, evidenceWidth)
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-3]) + "..."
}

// Text renders one result as a plain-text table for a person.
func Text(w io.Writer, r *predictions.Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s)", r.Input.Path, r.Input.Format)
	if r.Input.GPU != "" {
		fmt.Fprintf(&b, ", %s", r.Input.GPU)
	}
	if r.Input.Thread != "" {
		fmt.Fprintf(&b, ", thread %s", r.Input.Thread)
	}
	b.WriteString("\n\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CLAIM\tVERDICT\tMEASURED vs BOUND\tFROM\tEVIDENCE")
	for i := range r.Claims {
		c := &r.Claims[i]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.ID, c.Verdict, versus(c.Measured, c.Comparison, c.Bound), dash(c.From), claimLine(c))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("\n")
	for _, p := range r.Predictions {
		fmt.Fprintf(&b, "prediction %d: %-11s (%s)", p.ID, p.Verdict, strings.Join(p.Claims, ", "))
		for _, u := range p.Unchecked {
			fmt.Fprintf(&b, "; %s", u)
		}
		b.WriteString("\n")
	}
	ex := r.Exercise
	if ex.Verdict == "answered" {
		fmt.Fprintf(&b, "exercise: pageable/pinned at 64 MiB: h2d %.2fx, d2h %.2fx; pinning buys more: %s (%s)\n",
			*ex.H2DRatio, *ex.D2HRatio, ex.Answer, ex.From)
	} else {
		fmt.Fprintf(&b, "exercise: unavailable: %s\n", ex.Reason)
	}
	if r.DeviceCopyGBps > 0 {
		fmt.Fprintf(&b, "device-to-device copy: %.1f GB/s (%s)\n", r.DeviceCopyGBps, r.DeviceCopyFrom)
	}
	if len(r.Diagnostics) > 0 {
		b.WriteString("\n")
		for _, d := range r.Diagnostics {
			fmt.Fprintf(&b, "%s %s: %s\n", d.Level, d.Code, d.Message)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// TextMulti renders several results side by side: one column of verdicts
// and measured values per input, diagnostics below.
func TextMulti(w io.Writer, results []*predictions.Result) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	head := []string{"CLAIM", "BOUND"}
	for _, r := range results {
		head = append(head, r.Name())
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	if len(results) > 0 {
		for i, c := range results[0].Claims {
			row := []string{c.ID, c.Comparison + " " + boundText(c)}
			for _, r := range results {
				row = append(row, claimCell(r, i))
			}
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
		for i, p := range results[0].Predictions {
			row := []string{fmt.Sprintf("prediction %d", p.ID), ""}
			for _, r := range results {
				cell := string(r.Predictions[i].Verdict)
				if n := len(r.Predictions[i].Unchecked); n > 0 {
					cell += fmt.Sprintf(" (%d unchecked)", n)
				}
				row = append(row, cell)
			}
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
		row := []string{"exercise", "h2d/d2h at 64 MiB"}
		for _, r := range results {
			ex := r.Exercise
			if ex.Verdict != "answered" {
				row = append(row, "unavailable")
				continue
			}
			row = append(row, fmt.Sprintf("%.2f/%.2f %s", *ex.H2DRatio, *ex.D2HRatio, ex.Answer))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range results {
		for _, d := range r.Diagnostics {
			fmt.Fprintf(&b, "%s: %s %s: %s\n", r.Name(), d.Level, d.Code, d.Message)
		}
		for _, p := range r.Predictions {
			for _, u := range p.Unchecked {
				fmt.Fprintf(&b, "%s: prediction %d: %s\n", r.Name(), p.ID, u)
			}
		}
		for _, c := range r.Claims {
			if c.Verdict == predictions.Unavailable {
				fmt.Fprintf(&b, "%s: %s unavailable: %s\n", r.Name(), c.ID, clip(c.Reason, 2*evidenceWidth))
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func boundText(c predictions.Claim) string {
	if c.Comparison == "within 2x of" {
		return "predicted"
	}
	return num(c.Bound)
}

func claimCell(r *predictions.Result, i int) string {
	if i >= len(r.Claims) {
		return "-"
	}
	c := r.Claims[i]
	if c.Measured == nil {
		return string(c.Verdict)
	}
	s := fmt.Sprintf("%s %s", c.Verdict, num(*c.Measured))
	if c.Comparison == "within 2x of" {
		s += " vs " + num(c.Bound)
	}
	return s
}
