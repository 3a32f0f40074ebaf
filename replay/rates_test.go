package replay_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/nsyscheck/nsyscheck/replay"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// runRates reads the pinned copy rates of a run of the lesson's program
// (its results JSON) into a RateCoster: each timed size's rate, bounded by
// the slowest and fastest rates at sizes within a factor of 4.
func runRates(t testing.TB, dir string) *replay.RateCoster {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "pinned.results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Copies []struct {
			Direction, Source string
			Bytes             int64
			Ms                float64
		}
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	type point struct {
		bytes int64
		gbps  float64
	}
	byDir := map[vocab.CopyKind][]point{}
	for _, c := range res.Copies {
		if c.Source != "pinned" || c.Ms <= 0 {
			continue
		}
		dir := vocab.CopyHtoD
		if c.Direction == "d2h" {
			dir = vocab.CopyDtoH
		}
		byDir[dir] = append(byDir[dir], point{c.Bytes, float64(c.Bytes) / (c.Ms * 1e6)})
	}
	rc := &replay.RateCoster{Rates: map[vocab.CopyKind][]replay.RatePoint{}, Source: dir}
	for dir, ps := range byDir {
		for _, p := range ps {
			b := replay.Bound{Low: p.gbps, Mid: p.gbps, High: p.gbps}
			for _, q := range ps {
				if math.Abs(math.Log(float64(q.bytes)/float64(p.bytes))) <= math.Log(4) {
					b.Low, b.High = min(b.Low, q.gbps), max(b.High, q.gbps)
				}
			}
			rc.Rates[dir] = append(rc.Rates[dir], replay.RatePoint{Bytes: p.bytes, GBps: b})
		}
	}
	if len(rc.Rates) == 0 {
		t.Fatalf("%s: no pinned copy timings", dir)
	}
	return rc
}
