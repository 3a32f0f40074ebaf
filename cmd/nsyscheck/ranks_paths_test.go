package main

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestRanksJSONKeepsAbsolutePaths checks that the JSON of audit --ranks
// names a capture given by its absolute path by that path, as a shard's
// JSON must to name its captures where it is merged, and one given
// relative to this folder as given.
func TestRanksJSONKeepsAbsolutePaths(t *testing.T) {
	abs, err := filepath.Abs("../../testdata/captures/ddp-ranks/report.0.sqlite")
	if err != nil {
		t.Fatal(err)
	}
	const rel = "../../testdata/captures/ddp-ranks/report.1.sqlite"
	code, out, stderr := runMain(t, []string{"audit", "--ranks", "--format", "json", "--nvidia-rule", "off", abs, rel})
	if code != exitDied && code != exitHeld {
		t.Fatalf("audit --ranks: exit %d: %s", code, stderr)
	}
	var env struct {
		Inputs  []string
		Results []struct{ Capture string }
		Ranks   struct{ Rows []struct{ Capture string } }
	}
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatal(err)
	}
	want := []string{abs, rel}
	if len(env.Inputs) != 2 || len(env.Results) != 2 || len(env.Ranks.Rows) != 2 {
		t.Fatalf("inputs %q, %d results, %d rows: want 2 of each", env.Inputs, len(env.Results), len(env.Ranks.Rows))
	}
	for i, w := range want {
		if env.Inputs[i] != w || env.Results[i].Capture != w || env.Ranks.Rows[i].Capture != w {
			t.Errorf("rank %d named %q (input), %q (result), %q (row); want %q", i, env.Inputs[i], env.Results[i].Capture, env.Ranks.Rows[i].Capture, w)
		}
	}
}
