package check

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/fixture"
	"github.com/nsyscheck/nsyscheck/ranks"
	"github.com/nsyscheck/nsyscheck/report"
)

var (
	rankPinned   = filepath.Join("..", "testdata", "captures", "pipeline-pinned", "pipeline-pinned.sqlite")
	rankPageable = filepath.Join("..", "testdata", "captures", "pipeline-pageable", "pipeline-pageable.sqlite")
)

// job64 writes a 64-rank job: copies of the pinned pipeline, but rank 17,
// the pageable one, and rank 40, whose program runs 1.3 times slower.
func job64(t testing.TB) string {
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fixture.Job(t, dir, rankPinned, 64, map[int]string{17: rankPageable}, 40)
	return dir
}

// TestAuditRanks: the 64 ranks of a job audited on two workers, a row
// each in rank order; the pageable rank and the slow one stand out, and no
// other; the table is the same read back from the JSON of two shards of
// ranks, merged.
func TestAuditRanks(t *testing.T) {
	dir := job64(t)
	opts := RanksOptions{Jobs: 2, AuditOptions: AuditOptions{NoRule: true}}
	s, audited, err := AuditRanks(context.Background(), []string{dir}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Rows) != 64 || len(audited) != 64 || s.Region != "pass" {
		t.Fatalf("%d rows, %d audits, region %q", len(s.Rows), len(audited), s.Region)
	}
	out := map[string][]string{}
	for _, f := range s.Findings {
		out[f.Rank] = append(out[f.Rank], f.Kind)
	}
	if len(out) != 2 || len(out["17"]) != 2 || len(out["40"]) != 1 || out["40"][0] != ranks.KindSlower {
		t.Errorf("findings %+v", s.Findings)
	}
	for i, r := range s.Rows {
		if r.Rank != strconv.Itoa(i) || r.Err != "" || r.Copies != 192 || r.Peers != 63 {
			t.Errorf("row %d: %+v", i, r)
		}
		if i != 17 && r.Pageable != 0 || i == 17 && r.Pageable != 1 {
			t.Errorf("rank %d: pageable share %g", i, r.Pageable)
		}
	}
	if slow, peer := s.Rows[40].NowMs, s.Rows[40].PeerNowMs; slow < 1.25*peer || slow > 1.35*peer {
		t.Errorf("rank 40 takes %g ms, its peers %g", slow, peer)
	}

	// Two shards, each audited alone and written as JSON, read back whole.
	var shards []string
	for k, half := range [][]string{{filepath.Join(dir, "report.[0-9].sqlite"), filepath.Join(dir, "report.[1-2][0-9].sqlite")},
		{filepath.Join(dir, "report.[3-6][0-9].sqlite")}} {
		hs, ha, err := AuditRanks(context.Background(), half, opts)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := report.WriteJSON(&b, report.RanksEnvelope(hs, ha, "test")); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "shard-"+strconv.Itoa(k)+".json")
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		shards = append(shards, p)
	}
	merged, _, err := AuditRanks(context.Background(), shards, RanksOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(s)
	got, _ := json.Marshal(merged)
	if !bytes.Equal(got, want) {
		t.Errorf("the merged shards' table differs from the job's:\n%s\nwant\n%s", got, want)
	}
}
