package capture

import "testing"

// TestCrosscheckSQLiteCSV checks that the SQLite export and the nsys stats
// CSV reports of one capture give the same API-call list: names, order,
// start, end, result, ids and thread. cuda_api_trace writes whole
// nanoseconds, so nothing is rounded; the reference trace has no two calls
// with the same start, and Capture.Sort breaks ties by end and correlation
// id for both inputs alike, so the order is compared strictly. Row is the
// CSV data row and 0 for SQLite, so it is left out.
func TestCrosscheckSQLiteCSV(t *testing.T) {
	for _, tc := range []struct{ sqlite, csvDir string }{
		{"../testdata/reference/h200-ref/ref.sqlite", refCSV2025},
		{"../testdata/captures/h200-pinned/pinned.sqlite", "../testdata/captures/h200-pinned"},
		{"../testdata/captures/h200-pinned-nonvtx/pinned.sqlite", "../testdata/captures/h200-pinned-nonvtx"},
	} {
		t.Run(tc.csvDir, func(t *testing.T) { crosscheck(t, tc.sqlite, tc.csvDir) })
	}
}

func crosscheck(t *testing.T, sqlitePath, csvDir string) {
	db, err := LoadSQLite(sqlitePath, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := LoadCSVDir(csvDir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(db.Calls) != len(cs.Calls) {
		t.Fatalf("sqlite has %d calls, csv %d", len(db.Calls), len(cs.Calls))
	}
	seen := map[int64]bool{}
	for _, c := range cs.Calls {
		if seen[c.Start] {
			t.Logf("two calls start at %d: the order then rests on Sort's tie-breakers", c.Start)
		}
		seen[c.Start] = true
	}
	for i := range db.Calls {
		a, b := db.Calls[i], cs.Calls[i]
		a.Row, b.Row = 0, 0
		if a != b {
			t.Errorf("call %d: sqlite %+v, csv %+v", i, a, b)
		}
	}
}
