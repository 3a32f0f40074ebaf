package bigcapture

import (
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

// ManySource is the capture ManyCopies repeats by default, relative to the
// repository root: many_copies (testdata/programs) with 20,000 copies on
// the H200, the same program as the 600,000-copy capture it stands in for.
const ManySource = "testdata/captures/many-copies-small/many-copies-small.sqlite"

// ManyConfig says what ManyCopies writes.
type ManyConfig struct {
	// Source is an export of many_copies (ManySource); it is only read.
	Source string
	// OutDir receives <Name>.sqlite and, with CSV, the folder <Name>-csv.
	OutDir string
	// Name is the base name of the outputs; empty means many-<Copies>.
	Name string
	// Copies is how many copies the capture holds: a multiple of the
	// source's batch (1,000 copy calls between two synchronisations).
	Copies int
	// StepEvery, when above 0, puts every StepEvery consecutive copy calls
	// of a batch in an NVTX range "step" of their own, nested in the
	// batch's range (a training loop's per-step ranges).
	StepEvery int
	// CSV also writes the nsys stats reports cuda_api_trace,
	// cuda_gpu_trace and nvtx_pushpop_trace, the source's rows repeated as
	// the export's are, into <Name>-csv (no step ranges there); Rule writes
	// <Name>_cuda_memcpy_async.csv, NVIDIA's rule's output, beside the
	// export.
	CSV, Rule bool
}

// ManyResult says what ManyCopies wrote.
type ManyResult struct {
	SQLite      string        `json:"sqlite"`
	SQLiteBytes int64         `json:"sqliteBytes"`
	CSVDir      string        `json:"csvDir,omitempty"`
	RuleCSV     string        `json:"ruleCsv,omitempty"`
	Batches     int           `json:"batches"`
	Copies      int           `json:"copies"`
	Steps       int           `json:"steps"`
	Elapsed     time.Duration `json:"elapsedNs"`
}

// batch is one batch of the source: its copy calls and the synchronisation
// after them, between two NVTX pushes.
type batch struct {
	t0, t1 int64 // its time window: its range's push to the next batch's
	c0, c1 int64 // its correlation ids: first copy call to the sync
}

// ManyCopies writes a capture of many small cudaMemcpyAsync copies shaped
// like a real one of that size: the source's batches repeated in their
// order (pageable host-to-device, pinned host-to-device, pageable
// device-to-host, pinned device-to-host), each with its own calls, copies,
// synchronisation and NVTX range at its own times, shifted to follow the
// one before, with new correlation ids; the program's calls before and
// after the batches kept and shifted, the trace's span and nsys's counts
// of the events it collected made to match. Every column of every row is
// the source's but for times and correlation ids, so the tables keep nsys's
// schema and a real run's timings, rows in start order as nsys writes
// them.
func ManyCopies(cfg ManyConfig) (*ManyResult, error) {
	if cfg.Source == "" || cfg.OutDir == "" {
		return nil, errors.New("bigcapture: ManyCopies needs a source and an output folder")
	}
	if cfg.Name == "" {
		cfg.Name = fmt.Sprintf("many-%d", cfg.Copies)
	}
	began := time.Now()
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return nil, err
	}
	res := &ManyResult{SQLite: filepath.Join(cfg.OutDir, cfg.Name+".sqlite")}
	if err := copyFile(cfg.Source, res.SQLite); err != nil {
		return nil, err
	}
	for _, suffix := range []string{"-journal", "-wal", "-shm"} {
		_ = os.Remove(res.SQLite + suffix)
	}
	db, err := sql.Open("sqlite3", "file:"+(&url.URL{Path: filepath.ToSlash(res.SQLite)}).EscapedPath()+
		"?_journal_mode=OFF&_synchronous=OFF&_cache_size=-65536")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	m := &many{cfg: cfg, db: db, res: res}
	if err := m.inspect(); err != nil {
		return nil, fmt.Errorf("bigcapture: %s: %w", cfg.Source, err)
	}
	per := int(m.perBatch)
	if cfg.Copies <= 0 || cfg.Copies%per != 0 {
		return nil, fmt.Errorf("bigcapture: %d copies: give a positive multiple of the source's batch of %d", cfg.Copies, per)
	}
	res.Batches, res.Copies = cfg.Copies/per, cfg.Copies
	if err := m.write(res.Batches); err != nil {
		return nil, fmt.Errorf("bigcapture: writing %s: %w", res.SQLite, err)
	}
	if err := db.Close(); err != nil {
		return nil, err
	}
	if cfg.CSV || cfg.Rule {
		if err := m.writeCSV(res.Batches); err != nil {
			return nil, err
		}
	}
	if st, err := os.Stat(res.SQLite); err == nil {
		res.SQLiteBytes = st.Size()
	}
	res.Elapsed = time.Since(began)
	return res, nil
}

// many holds the state of one ManyCopies call.
type many struct {
	cfg      ManyConfig
	db       *sql.DB
	res      *ManyResult
	batches  []batch
	perBatch int64 // copy calls per batch
	copyAPI  []int64
	// plan is the output: for each output batch, its source batch and the
	// shift of its times and correlation ids.
	plan []shift
	// dt, dc shift what follows the batches.
	dt, dc int64
}

type shift struct {
	src    int
	dt, dc int64
}

// inspect finds the source's batches: its push/pop ranges in start order,
// each holding copy calls of one kind and the synchronisation after them.
func (m *many) inspect() error {
	var pushPop int64
	if err := m.db.QueryRow(`SELECT id FROM ` + nsysdb.TableEventType + ` WHERE name = '` + nsysdb.EventPushPopRange + `'`).Scan(&pushPop); err != nil {
		return fmt.Errorf("no %s event type: %w", nsysdb.EventPushPopRange, err)
	}
	rows, err := m.db.Query(`SELECT id FROM `+tabStrings+` WHERE value LIKE ?`, "cudaMemcpyAsync%")
	if err != nil {
		return err
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		m.copyAPI = append(m.copyAPI, id)
	}
	rows.Close()
	if len(m.copyAPI) == 0 {
		return errors.New("no cudaMemcpyAsync calls: not a capture of many_copies")
	}
	rows, err = m.db.Query(`SELECT start, "end" FROM `+tabNVTX+` WHERE eventType = ? ORDER BY start`, pushPop)
	if err != nil {
		return err
	}
	var spans [][2]int64
	for rows.Next() {
		var s [2]int64
		if err := rows.Scan(&s[0], &s[1]); err != nil {
			rows.Close()
			return err
		}
		spans = append(spans, s)
	}
	rows.Close()
	if len(spans) == 0 || len(spans)%4 != 0 {
		return fmt.Errorf("%d NVTX ranges: many_copies makes batches in fours (pageable and pinned, each direction)", len(spans))
	}
	var gaps int64
	for i := 1; i < len(spans); i++ {
		gaps += spans[i][0] - spans[i-1][1]
	}
	gap := int64(0)
	if len(spans) > 1 {
		gap = gaps / int64(len(spans)-1)
	}
	copyIn := intList(m.copyAPI)
	for i, s := range spans {
		b := batch{t0: s[0], t1: s[1] + gap}
		if i+1 < len(spans) {
			b.t1 = spans[i+1][0]
		}
		var copies int64
		if err := m.db.QueryRow(`SELECT min(correlationId), max(correlationId), sum(nameId IN (`+copyIn+`)) FROM `+tabRuntime+
			` WHERE start >= ? AND start < ?`, b.t0, b.t1).Scan(&b.c0, &b.c1, &copies); err != nil {
			return fmt.Errorf("batch %d: %w", i, err)
		}
		if i == 0 {
			m.perBatch = copies
		}
		if copies != m.perBatch || b.c1-b.c0 != copies {
			return fmt.Errorf("batch %d holds %d copy calls in correlation ids %d-%d: not one synchronisation after %d copy calls", i, copies, b.c0, b.c1, m.perBatch)
		}
		m.batches = append(m.batches, b)
	}
	return nil
}

// planOf lays out n output batches: batch i repeats source batch i mod the
// source's count (which keeps the order of kinds and directions), starting
// where the one before ended.
func (m *many) planOf(n int) {
	first, last := m.batches[0], m.batches[len(m.batches)-1]
	at, corr := first.t0, first.c0
	m.plan = make([]shift, n)
	for i := range m.plan {
		src := i % len(m.batches)
		b := m.batches[src]
		m.plan[i] = shift{src: src, dt: at - b.t0, dc: corr - b.c0}
		at += b.t1 - b.t0
		corr += b.c1 - b.c0 + 1
	}
	m.dt, m.dc = at-last.t1, corr-(last.c1+1)
}

// tableKey is how a table's rows are placed: by correlation id (the calls,
// copies and synchronisations) or by time.
type tableKey struct {
	table string
	corr  bool   // by correlation id, else by start time
	time  string // the time column of a table placed by time
	// once: the rows among the batches are kept once, as they were (nsys's
	// own messages), not repeated with them.
	once bool
}

func (m *many) write(n int) error {
	m.planOf(n)
	tx, err := m.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`CREATE TEMP TABLE plan (src INTEGER, dt INTEGER, dc INTEGER)`); err != nil {
		return err
	}
	if _, err := tx.Exec(`CREATE TEMP TABLE src (id INTEGER PRIMARY KEY, t0 INTEGER, t1 INTEGER, c0 INTEGER, c1 INTEGER)`); err != nil {
		return err
	}
	for i, b := range m.batches {
		if _, err := tx.Exec(`INSERT INTO src VALUES (?, ?, ?, ?, ?)`, i, b.t0, b.t1, b.c0, b.c1); err != nil {
			return err
		}
	}
	for _, p := range m.plan {
		if _, err := tx.Exec(`INSERT INTO plan VALUES (?, ?, ?)`, p.src, p.dt, p.dc); err != nil {
			return err
		}
	}
	first, last := m.batches[0], m.batches[len(m.batches)-1]
	for _, k := range []tableKey{{table: tabRuntime, corr: true}, {table: tabMemcpy, corr: true}, {table: nsysdb.TableSync, corr: true},
		{table: tabNVTX, time: "start"}, {table: tabOverhead, time: "start"}, {table: nsysdb.TableDiagnostic, time: "timestamp", once: true}} {
		cols, err := m.columnsOf(tx, k.table)
		if err != nil {
			return err
		}
		if cols == nil {
			continue
		}
		if err := m.repeat(tx, k, cols, first, last); err != nil {
			return fmt.Errorf("table %s: %w", k.table, err)
		}
	}
	if m.cfg.StepEvery > 0 {
		if err := m.steps(tx); err != nil {
			return err
		}
	}
	if _, err := tx.Exec(`UPDATE `+nsysdb.TableAnalysis+` SET stopTime = stopTime + ?, duration = duration + ?`, m.dt, m.dt); err != nil {
		return err
	}
	if err := m.counts(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// columnsOf lists a table's columns, nil when the source has no such table.
func (m *many) columnsOf(tx *sql.Tx, table string) ([]string, error) {
	rows, err := tx.Query(`SELECT name FROM pragma_table_info(?)`, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	return cols, rows.Err()
}

// repeat rewrites one table: its rows before the batches as they were, the
// batches' rows once per output batch with its shift, the rows after
// shifted past the last batch, all in start order.
func (m *many) repeat(tx *sql.Tx, k tableKey, cols []string, first, last batch) error {
	shifted := func(dt, dc string) string {
		out := make([]string, len(cols))
		for i, c := range cols {
			qc := `t.` + nsysdb.QuoteIdent(c)
			switch {
			case c == "start" || c == "end" || c == "timestamp":
				out[i] = qc + ` + ` + dt
			case c == "correlationId" && dc != "":
				out[i] = qc + ` + ` + dc
			default:
				out[i] = qc
			}
		}
		return strings.Join(out, ", ")
	}
	var head, body, tail string
	if k.corr {
		head = `t.correlationId < ` + itoa(first.c0)
		body = `t.correlationId BETWEEN s.c0 AND s.c1`
		tail = `t.correlationId > ` + itoa(last.c1)
	} else {
		col := `t.` + k.time
		head = col + ` < ` + itoa(first.t0)
		body = col + ` >= s.t0 AND ` + col + ` < s.t1`
		tail = col + ` >= ` + itoa(last.t1)
		if k.once {
			head, body = col+` < `+itoa(last.t1), `0`
		}
	}
	orig := `orig_` + k.table
	order := `start`
	if k.time != "" {
		order = k.time
	}
	dc := "p.dc"
	tailDC := itoa(m.dc)
	if !k.corr {
		dc, tailDC = "", ""
	}
	stmts := []string{
		`CREATE TEMP TABLE ` + orig + ` AS SELECT * FROM main.` + nsysdb.QuoteIdent(k.table),
		`DELETE FROM main.` + nsysdb.QuoteIdent(k.table),
		`INSERT INTO main.` + nsysdb.QuoteIdent(k.table) + ` SELECT * FROM (` +
			`SELECT ` + shifted("0", "") + ` FROM ` + orig + ` t WHERE ` + head +
			` UNION ALL SELECT ` + shifted("p.dt", dc) + ` FROM plan p JOIN src s ON s.id = p.src JOIN ` + orig + ` t ON ` + body +
			` UNION ALL SELECT ` + shifted(itoa(m.dt), tailDC) + ` FROM ` + orig + ` t WHERE ` + tail +
			`) ORDER BY ` + nsysdb.QuoteIdent(order),
		`DROP TABLE ` + orig,
	}
	var before int64
	if err := tx.QueryRow(`SELECT count(*) FROM main.` + nsysdb.QuoteIdent(k.table)).Scan(&before); err != nil {
		return err
	}
	var placed int64
	if err := tx.QueryRow(`SELECT (SELECT count(*) FROM main.` + nsysdb.QuoteIdent(k.table) + ` t WHERE ` + head + `) + ` +
		`(SELECT count(*) FROM main.` + nsysdb.QuoteIdent(k.table) + ` t, src s WHERE ` + body + `) + ` +
		`(SELECT count(*) FROM main.` + nsysdb.QuoteIdent(k.table) + ` t WHERE ` + tail + `)`).Scan(&placed); err != nil {
		return err
	}
	if placed != before {
		return fmt.Errorf("%d of its %d rows lie before, in or after the batches: the rest lie between them", placed, before)
	}
	for _, s := range stmts {
		if _, err := tx.Exec(s); err != nil {
			return err
		}
	}
	return nil
}

// steps adds the per-step NVTX ranges: every StepEvery copy calls of a
// batch in a range "step" from just before the first call's start to just
// after the last one's end, a copy of the batch range's row otherwise.
func (m *many) steps(tx *sql.Tx) error {
	if int(m.perBatch)%m.cfg.StepEvery != 0 {
		return fmt.Errorf("--step %d: give a divisor of the batch's %d copy calls, so that no step spans two batches", m.cfg.StepEvery, m.perBatch)
	}
	cols, err := m.columnsOf(tx, tabNVTX)
	if err != nil {
		return err
	}
	sel := make([]string, len(cols))
	for i, c := range cols {
		switch c {
		case "start":
			sel[i] = `g.s - 50`
		case "end":
			sel[i] = `g.e + 50`
		case "text":
			sel[i] = `'step'`
		case "textId":
			sel[i] = `NULL`
		default:
			sel[i] = `t.` + nsysdb.QuoteIdent(c)
		}
	}
	k := itoa(int64(m.cfg.StepEvery))
	_, err = tx.Exec(`CREATE TEMP TABLE nvtx_steps AS SELECT ` + strings.Join(sel, ", ") +
		` FROM (SELECT min(start) AS s, max("end") AS e FROM (SELECT start, "end", (row_number() OVER (ORDER BY start) - 1) / ` + k +
		` AS g FROM main.` + tabRuntime + ` WHERE nameId IN (` + intList(m.copyAPI) + `)) GROUP BY g) g, ` +
		`(SELECT * FROM main.` + tabNVTX + ` WHERE text LIKE 'batch-%' LIMIT 1) t`)
	if err != nil {
		return err
	}
	if err := tx.QueryRow(`SELECT count(*) FROM nvtx_steps`).Scan(&m.res.Steps); err != nil {
		return err
	}
	for _, s := range []string{
		`CREATE TEMP TABLE orig_nvtx AS SELECT * FROM main.` + tabNVTX + ` UNION ALL SELECT * FROM nvtx_steps`,
		`DELETE FROM main.` + tabNVTX,
		// The batch's range first of two that start together: it encloses
		// the step.
		`INSERT INTO main.` + tabNVTX + ` SELECT * FROM orig_nvtx ORDER BY start, "end" DESC`,
		`DROP TABLE orig_nvtx`, `DROP TABLE nvtx_steps`,
	} {
		if _, err := tx.Exec(s); err != nil {
			return err
		}
	}
	return nil
}

// counts makes nsys's messages of how many events it collected tell the
// rows the capture now holds.
func (m *many) counts(tx *sql.Tx) error {
	var nvtx, cuda int64
	if err := tx.QueryRow(`SELECT count(*) FROM main.` + tabNVTX).Scan(&nvtx); err != nil {
		return err
	}
	q := `SELECT (SELECT count(*) FROM main.` + tabRuntime + `) + (SELECT count(*) FROM main.` + tabMemcpy + `)`
	for _, t := range []string{nsysdb.TableMemset, tabKernel} {
		if cols, err := m.columnsOf(tx, t); err == nil && cols != nil {
			q += ` + (SELECT count(*) FROM main.` + t + `)`
		}
	}
	if err := tx.QueryRow(q).Scan(&cuda); err != nil {
		return err
	}
	for _, u := range []struct {
		prefix string
		n      int64
	}{{"Number of NVTX events collected: \t", nvtx}, {"Number of CUDA events collected: \t", cuda}} {
		if _, err := tx.Exec(`UPDATE main.`+nsysdb.TableDiagnostic+` SET text = ? || ? || '.' WHERE text LIKE ? || '%'`, u.prefix, u.n, u.prefix); err != nil {
			return err
		}
	}
	return nil
}

// tabOverhead is nsys's record of its own buffer flushes, which nsyscheck
// never reads; its rows among the batches are repeated with them.
const tabOverhead = "PROFILER_OVERHEAD"

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// intList writes integers as a comma-separated SQL list.
func intList(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = itoa(id)
	}
	return strings.Join(s, ", ")
}
