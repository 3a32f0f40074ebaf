package bigcapture

import (
	"bufio"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/predictions"
)

var source = filepath.Join("..", "..", DefaultSource)

func openRO(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// schema lists every table with its columns, in order.
func schema(t *testing.T, db *sql.DB) map[string][]string {
	t.Helper()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	rows.Close()
	out := map[string][]string{}
	for _, n := range names {
		cr, err := db.Query(`SELECT name, type FROM pragma_table_info(?)`, n)
		if err != nil {
			t.Fatal(err)
		}
		for cr.Next() {
			var c, typ string
			if err := cr.Scan(&c, &typ); err != nil {
				t.Fatal(err)
			}
			out[n] = append(out[n], c+" "+typ)
		}
		cr.Close()
	}
	return out
}

func count(t *testing.T, db *sql.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// dump returns the rows a query selects, one string per row.
func dump(t *testing.T, db *sql.DB, query string) []string {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(vals...))
	}
	return out
}

func TestGenerateSmall(t *testing.T) {
	const n = 10_000
	before, err := os.ReadFile(source)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	res, err := Generate(Config{Source: source, OutDir: dir, Runtime: n, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(source)
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Fatal("the source capture was modified")
	}
	if res.AddedRuntime != n || res.AddedMemcpy != n/20 || res.AddedKernels != n/20 {
		t.Errorf("added %d calls, %d memcpys, %d kernels; want %d, %d, %d",
			res.AddedRuntime, res.AddedMemcpy, res.AddedKernels, n, n/20, n/20)
	}
	if res.Before == 0 || res.Among == 0 || res.After == 0 {
		t.Errorf("added calls not spread around the program's span: %d before, %d among, %d after", res.Before, res.Among, res.After)
	}

	src, big := openRO(t, source), openRO(t, res.SQLite)
	if s, b := schema(t, src), schema(t, big); !reflect.DeepEqual(s, b) {
		t.Errorf("schema changed:\nsource %v\nscaled %v", s, b)
	}
	for table, added := range map[string]int{
		tabRuntime: n, tabMemcpy: n / 20, tabKernel: n / 20, tabNVTX: res.AddedNVTX,
	} {
		q := `SELECT count(*) FROM ` + table
		if got, want := count(t, big, q), count(t, src, q)+added; got != want {
			t.Errorf("%s: %d rows, want %d", table, got, want)
		}
	}
	for _, table := range []string{tabRuntime, tabMemcpy, tabKernel} {
		q := `SELECT count(*) - count(DISTINCT correlationId) FROM ` + table
		if d := count(t, big, q); d != 0 {
			t.Errorf("%s: %d duplicate correlation ids", table, d)
		}
	}
	if d := count(t, big, `SELECT count(*) FROM `+tabKernel+` k JOIN `+tabRuntime+` r USING (correlationId)
		JOIN StringIds s ON s.id = r.nameId WHERE s.value NOT LIKE '%LaunchKernel%'`); d != 0 {
		t.Errorf("%d kernels correlate with a call that launches none", d)
	}
	if d := count(t, big, `SELECT count(*) FROM `+tabRuntime+` WHERE "end" < start`); d != 0 {
		t.Errorf("%d calls end before they start", d)
	}

	// The program's rows are unchanged, and its thread has no added call.
	progTid := `(SELECT r.globalTid FROM ` + tabRuntime + ` r JOIN StringIds s ON s.id = r.nameId
		WHERE s.value = 'cudaMemcpyAsync_v3020' GROUP BY 1 ORDER BY count(*) DESC LIMIT 1)`
	for _, q := range []string{
		`SELECT r.*, s.value FROM ` + tabRuntime + ` r JOIN StringIds s ON s.id = r.nameId WHERE r.globalTid = ` + progTid + ` ORDER BY start`,
		`SELECT start, "end", text, globalTid FROM ` + tabNVTX + ` WHERE text IN ('h2d-pageable', 'h2d-pinned', 'd2h-pageable', 'd2h-pinned', 'async-pageable', 'async-pinned', 'kernel-device-resident', 'kernel-zero-copy', 'd2d-reference') ORDER BY start`,
		`SELECT k.*, s.value FROM ` + tabKernel + ` k JOIN StringIds s ON s.id = k.shortName WHERE s.value = 'scaleCopy' ORDER BY start`,
		`SELECT * FROM ` + tabMemcpy + ` WHERE correlationId IN (SELECT correlationId FROM ` + tabRuntime + ` WHERE globalTid = ` + progTid + `) ORDER BY start`,
	} {
		s, b := dump(t, src, q), dump(t, big, q)
		if len(s) == 0 {
			t.Errorf("no source rows for %s", q)
		}
		if !reflect.DeepEqual(s, b) {
			t.Errorf("program rows differ for %s: source %d rows, scaled %d", q, len(s), len(b))
		}
	}
	asyncQ := `SELECT count(*) FROM ` + tabRuntime + ` r JOIN StringIds s ON s.id = r.nameId
		WHERE s.value = 'cudaMemcpyAsync_v3020' AND r.globalTid = ` + progTid
	if got := count(t, big, asyncQ); got != 22 {
		t.Errorf("%d cudaMemcpyAsync calls on the program's thread, want 22", got)
	}
	if got := count(t, big, `SELECT count(*) FROM `+tabNVTX+` WHERE eventType = 59 AND globalTid = `+progTid); got != 9 {
		t.Errorf("%d NVTX ranges on the program's thread, want 9", got)
	}

	// CSV: header, one row per API call, in start order.
	f, err := os.Open(res.CSV)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan()
	if sc.Text() != CSVHeader {
		t.Errorf("CSV header %q", sc.Text())
	}
	rows, last, unordered := 0, int64(-1), 0
	for sc.Scan() {
		rows++
		var start int64
		fmt.Sscan(strings.SplitN(sc.Text(), ",", 2)[0], &start)
		if start < last {
			unordered++
		}
		last = start
	}
	if want := count(t, big, `SELECT count(*) FROM `+tabRuntime); rows != want || res.CSVRows != want {
		t.Errorf("CSV has %d rows (reported %d), want %d", rows, res.CSVRows, want)
	}
	if unordered != 0 {
		t.Errorf("%d CSV rows out of start order", unordered)
	}
}

// TestScaledVerdicts checks that the scaled capture gives the same verdicts
// as the source, both as SQLite and as a CSV report.
func TestScaledVerdicts(t *testing.T) {
	dir := t.TempDir()
	res, err := Generate(Config{Source: source, OutDir: dir, Runtime: 20_000, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	opts := capture.Options{APINames: predictions.Names()}
	verdicts := func(c *capture.Capture) map[string]predictions.Verdict {
		r := predictions.Evaluate(c)
		out := map[string]predictions.Verdict{}
		for _, cl := range r.Claims {
			out[cl.ID] = cl.Verdict
		}
		return out
	}
	want, err := capture.LoadSQLite(source, opts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := capture.LoadSQLite(res.SQLite, opts)
	if err != nil {
		t.Fatal(err)
	}
	if w, g := verdicts(want), verdicts(got); !reflect.DeepEqual(w, g) {
		t.Errorf("SQLite verdicts differ:\nsource %v\nscaled %v", w, g)
	}

	c, err := capture.LoadCSVDir(res.CSVDir, opts)
	if err != nil {
		t.Fatal(err)
	}
	var async int
	for _, a := range c.Calls {
		if a.Name == "cudaMemcpyAsync" && a.PID == res.LessonPID && a.TID == res.LessonTID {
			async++
		}
	}
	if async != 22 {
		t.Errorf("CSV: %d cudaMemcpyAsync calls on the program's thread, want 22", async)
	}
}
