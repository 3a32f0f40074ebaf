package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/fleet"
	"github.com/nsyscheck/nsyscheck/ranks"
)

func fleetH200(name string, gpu int, h2d, d2h float64) fleet.Entry {
	return fleet.Entry{Name: name, Host: "node1", GPU: gpu, Model: "NVIDIA H200", NUMANode: gpu / 4, Binding: "numactl",
		Link: fleet.Link{Gen: 5, Width: 16}, RatedGBps: 63.015, H2DGBps: h2d, D2HGBps: d2h, Held: 4, Predictions: 4}
}

// Eight H200s, one of them with its link trained down to Gen4: the text
// table marks it and lists its four findings; the Markdown row carries its
// numbers and efficiency.
func TestFleetDegradedLink(t *testing.T) {
	var entries []fleet.Entry
	for i := 0; i < 7; i++ {
		entries = append(entries, fleetH200("n1/gpu"+string(rune('0'+i)), i, 54.7+0.1*float64(i), 54.9))
	}
	slow := fleetH200("n1/gpu7", 7, 26.1, 26.3)
	slow.Link = fleet.Link{Gen: 5, Width: 16, SeenGen: 4, SeenWidth: 16}
	s := fleet.Summarize(append(entries, slow), fleet.DefaultThresholds)
	var text, md bytes.Buffer
	if err := WriteFleet(&text, FormatText, &s, TextOptions{Width: 200}); err != nil {
		t.Fatal(err)
	}
	if err := WriteFleet(&md, FormatMarkdown, &s, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Count(text.String(), "OUTLIER") != 1 || strings.Count(text.String(), "outlier below-") != 4 {
		t.Errorf("text:\n%s", text.String())
	}
	if !strings.Contains(md.String(), "| n1/gpu7 | node1 | 7 | NVIDIA H200 | 1 (numactl) | Gen5 x16 (seen Gen4 x16) | 63.0 | 26.1 | 41% | 26.3 | 42% | 4/4 held | OUTLIER |") {
		t.Errorf("markdown:\n%s", md.String())
	}
	var js bytes.Buffer
	if err := WriteFleet(&js, FormatJSON, &s, TextOptions{}); err != nil || js.Len() != 0 {
		t.Errorf("JSON prints the table: %q, %v", js.String(), err)
	}
	page, err := FleetFile(s)
	if err != nil || !strings.HasPrefix(string(page), "# Fleet\n\n## Fleet\n") {
		t.Errorf("fleet.md: %q, %v", page, err)
	}
}

// Unknown numbers print as dashes, a shared GPU is noted, and a fleet
// without findings says so with its thresholds.
func TestFleetUnknownAndShared(t *testing.T) {
	a := fleetH200("a", 0, 55, 55)
	a.Shared = true
	unknown := fleet.Entry{Name: "u", GPU: -1, Model: "NVIDIA H200", NUMANode: -1}
	s := fleet.Summarize([]fleet.Entry{a, unknown}, fleet.DefaultThresholds)
	var text bytes.Buffer
	if err := FleetText(&text, s, TextOptions{Width: 200}); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	if !strings.Contains(out, "no outlier: every GPU reaches 70% of its rated link and 85% of its peers' median") {
		t.Errorf("no finding line:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^u +- +- +NVIDIA H200 +- +- +- +- +-`).MatchString(out) {
		t.Errorf("unknown row:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^a +node1 +0 .* 87% .* shared$`).MatchString(out) {
		t.Errorf("shared row:\n%s", out)
	}
}

// On an 80-column terminal the table is split into parts that fit, each
// repeating the RUN column, and the findings are wrapped: no line is wider
// than the terminal and no cell or finding is lost.
func TestFleetTextFitsWidth(t *testing.T) {
	var entries []fleet.Entry
	for i := 0; i < 3; i++ {
		entries = append(entries, fleetH200("n1/gpu"+string(rune('0'+i)), i, 54.7, 54.9))
	}
	slow := fleetH200("n1/gpu3", 3, 26.1, 26.3)
	slow.Link = fleet.Link{Gen: 5, Width: 16, SeenGen: 4, SeenWidth: 16}
	s := fleet.Summarize(append(entries, slow), fleet.DefaultThresholds)
	var text bytes.Buffer
	if err := FleetText(&text, s, TextOptions{Width: 80}); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	for _, line := range strings.Split(out, "\n") {
		if n := len([]rune(line)); n > 80 {
			t.Errorf("line of %d columns: %q", n, line)
		}
	}
	for _, h := range fleetHeader {
		if !strings.Contains(out, h) {
			t.Errorf("header %q missing:\n%s", h, out)
		}
	}
	if got := len(regexp.MustCompile(`(?m)^RUN `).FindAllString(out, -1)); got < 2 {
		t.Errorf("the table is not split with RUN repeated (%d parts):\n%s", got, out)
	}
	if !regexp.MustCompile(`(?m)^n1/gpu3 .*OUTLIER$`).MatchString(out) || !strings.Contains(out, "Gen5 x16 (seen Gen4 x16)") {
		t.Errorf("slow GPU's cells:\n%s", out)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, f := range s.Findings {
		if !strings.Contains(flat, findingWords(f)) {
			t.Errorf("finding %q cut:\n%s", findingWords(f), out)
		}
	}
}

// A rank slower than its peers on another GPU than theirs is said so, in
// text and Markdown, beside its time against theirs; and the GPUs the
// ranks ran on are named, each with its ranks, where they are of more than
// one kind.
func TestRanksSlowerOnAnotherGPU(t *testing.T) {
	s := ranks.Summary{Region: "step", Rows: []ranks.Row{
		{Rank: "0", Capture: "report.0.sqlite", NowMs: 30, Peers: 2, PeerNowMs: 20, GPU: "Tesla T4", Outlier: true},
		{Rank: "1", Capture: "report.1.sqlite", NowMs: 20, Peers: 2, PeerNowMs: 25, GPU: "NVIDIA H200"},
		{Rank: "2", Capture: "report.2.sqlite", NowMs: 20, Peers: 2, PeerNowMs: 25, GPU: "NVIDIA H200"},
	}, Findings: []ranks.Finding{{Row: 0, Rank: "0", Kind: ranks.KindSlower, Got: 30, PeerMedian: 20, Threshold: 1.18, GPU: "Tesla T4", PeerGPU: "NVIDIA H200"}}}
	const want = "rank 0: step takes 30 ms, 1.50x the median of its 2 peers, 20 ms (the limit is 1.18x); it ran on Tesla T4, where its peers ran on NVIDIA H200: another GPU, which may be why"
	var text, md bytes.Buffer
	if err := RanksText(&text, &s, TextOptions{Width: 1000}); err != nil {
		t.Fatal(err)
	}
	if err := RanksMarkdown(&md, &s); err != nil {
		t.Fatal(err)
	}
	const kinds = "the ranks ran on 2 kinds of GPU: Tesla T4 (rank 0), NVIDIA H200 (ranks 1, 2); each row's times are set beside its peers' whichever GPU they ran on"
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String()} {
		for _, w := range []string{want, kinds} {
			if !strings.Contains(out, w) {
				t.Errorf("%s lacks %q:\n%s", name, w, out)
			}
		}
	}
	// Ranks of one GPU are not said to be of kinds.
	one := ranks.Summary{Region: "step", Rows: s.Rows[1:]}
	text.Reset()
	if err := RanksText(&text, &one, TextOptions{Width: 1000}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "kinds of GPU") {
		t.Errorf("ranks of one GPU said to be of kinds:\n%s", text.String())
	}
}
