// Package bigcapture scales a real Nsight Systems SQLite export up to the
// size of a training job's capture, for performance work: it copies the
// export and embeds the program's own records among many unrelated CUDA API
// calls, memory copies and kernels from other threads of the same process and
// from another process, keeping the nsys schema (same tables, same columns)
// and leaving every one of the program's rows exactly as it was. It also
// writes the matching `nsys stats` cuda_api_trace CSV report.
package bigcapture

import (
	"bufio"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	_ "github.com/mattn/go-sqlite3" // SQLite driver for database/sql

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/internal/recount"
)

// DefaultSource is the capture the generator scales by default, relative to
// the repository root.
const DefaultSource = "testdata/captures/h200-pinned/pinned.sqlite"

// CSVHeader is the header of nsys 2025.3's cuda_api_trace CSV report.
const CSVHeader = "Start (ns),Duration (ns),Name,Result,CorrID,Pid,Tid,T-Pri,Thread Name"

// Config says what to generate.
type Config struct {
	// Source is the nsys SQLite export to scale up; it is only read.
	Source string
	// SourceCSV is the source's cuda_api_trace CSV report, whose rows are
	// copied into the scaled report verbatim. Empty means the
	// <base>_cuda_api_trace.csv beside Source.
	SourceCSV string
	// OutDir receives <Name>.sqlite, and the folder <Name>-csv holding
	// <Name>_cuda_api_trace.csv (a folder of its own, as capture.LoadCSVDir
	// wants one capture per folder). Both are created if needed; existing
	// files of those names are replaced.
	OutDir string
	// Name is the base name of the outputs; empty means "big".
	Name string
	// Runtime is the number of unrelated CUDA API rows to add.
	Runtime int
	// MemcpyEvery and KernelEvery: one added API call in MemcpyEvery is a
	// memory copy and one in KernelEvery a kernel launch, each with its GPU
	// activity record. 0 means 20 (N/20 copies, N/20 kernels).
	MemcpyEvery int
	KernelEvery int
	// NVTXEvery: one unrelated NVTX range on another thread per NVTXEvery
	// added API calls. 0 means 1000; negative adds none.
	NVTXEvery int
	// Seed makes the output reproducible.
	Seed uint64
	// NoCSV skips the CSV report.
	NoCSV bool
}

// Result describes what Generate wrote.
type Result struct {
	SQLite      string        `json:"sqlite"`
	CSVDir      string        `json:"csvDir,omitempty"`
	CSV         string        `json:"csv,omitempty"`
	SQLiteBytes int64         `json:"sqliteBytes"`
	CSVBytes    int64         `json:"csvBytes,omitempty"`
	Elapsed     time.Duration `json:"elapsedNs"` // copy, inserts, commit and CSV together

	AddedRuntime int `json:"addedRuntime"`
	AddedMemcpy  int `json:"addedMemcpy"`
	AddedKernels int `json:"addedKernels"`
	AddedNVTX    int `json:"addedNvtx"`

	SourceRuntime int `json:"sourceRuntime"` // rows of the source's runtime table
	CSVRows       int `json:"csvRows"`       // data rows of the CSV report

	// The program's own calls span [LessonStart, LessonEnd] on thread
	// LessonPID/LessonTID; the added rows span [SpanStart, SpanEnd].
	LessonStart, LessonEnd int64
	LessonPID, LessonTID   int64
	SpanStart, SpanEnd     int64
	Before, Among, After   int // added API calls starting before, within and after the lesson's span
}

// Table names of the nsys export.
const (
	tabAnalysis = nsysdb.TableAnalysis
	tabRuntime  = nsysdb.TableRuntime
	tabMemcpy   = nsysdb.TableMemcpy
	tabKernel   = nsysdb.TableKernel
	tabNVTX     = nsysdb.TableNVTX
	tabStrings  = nsysdb.TableStrings
	tabThreads  = nsysdb.TableThreadNames
	tabProcs    = nsysdb.TableProcesses
	tabStreams  = nsysdb.TableCUDAStream
	tabContexts = nsysdb.TableCUDAContext
)

// Generate writes the scaled capture (and its CSV report) described by cfg.
func Generate(cfg Config) (*Result, error) {
	if cfg.Source == "" {
		return nil, errors.New("bigcapture: no source capture")
	}
	if cfg.OutDir == "" {
		return nil, errors.New("bigcapture: no output folder")
	}
	if cfg.Runtime < 0 {
		return nil, fmt.Errorf("bigcapture: negative row count %d", cfg.Runtime)
	}
	cfg = cfg.withDefaults()
	began := time.Now()
	res, orig, err := prepareOutput(cfg)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite3", "file:"+(&url.URL{Path: filepath.ToSlash(res.SQLite)}).EscapedPath()+
		"?_journal_mode=OFF&_synchronous=OFF&_cache_size=-65536")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)

	g := &gen{cfg: cfg, db: db, res: res, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))}
	if err := g.inspect(); err != nil {
		return nil, err
	}
	tx, err := db.Begin()
	if err != nil {
		return nil, err
	}
	g.tx = tx
	var csvw *csvWriter
	if !cfg.NoCSV {
		if csvw, err = newCSVWriter(res.CSV, orig); err != nil {
			_ = tx.Rollback()
			return nil, err
		}
	}
	err = g.run(csvw)
	if err == nil {
		err = g.coverSpan()
	}
	if err != nil {
		_ = tx.Rollback()
		if csvw != nil {
			csvw.f.Close()
		}
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	// nsys's count of the CUDA events it collected follows the records
	// added, as in an export of a run that made them.
	if err := recount.CUDAEvents(db); err != nil {
		return nil, fmt.Errorf("%s: setting nsys's count of CUDA events: %w", res.SQLite, err)
	}
	if csvw != nil {
		n, err := csvw.close()
		if err != nil {
			return nil, err
		}
		res.CSVRows = n
	}
	if err := db.Close(); err != nil {
		return nil, err
	}
	res.Elapsed = time.Since(began)
	if st, err := os.Stat(res.SQLite); err == nil {
		res.SQLiteBytes = st.Size()
	}
	if res.CSV != "" {
		if st, err := os.Stat(res.CSV); err == nil {
			res.CSVBytes = st.Size()
		}
	}
	return res, nil
}

// withDefaults fills what cfg leaves unset.
func (cfg Config) withDefaults() Config {
	if cfg.Name == "" {
		cfg.Name = "big"
	}
	if cfg.MemcpyEvery <= 0 {
		cfg.MemcpyEvery = 20
	}
	if cfg.KernelEvery <= 0 {
		cfg.KernelEvery = 20
	}
	if cfg.NVTXEvery == 0 {
		cfg.NVTXEvery = 1000
	}
	if cfg.SourceCSV == "" && !cfg.NoCSV {
		cfg.SourceCSV = strings.TrimSuffix(cfg.Source, filepath.Ext(cfg.Source)) + "_cuda_api_trace.csv"
	}
	return cfg
}

// prepareOutput copies the source export into the output folder (without
// its journal files) and, unless cfg.NoCSV, reads the source CSV report's
// lines and makes the CSV folder.
func prepareOutput(cfg Config) (*Result, []csvLine, error) {
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return nil, nil, err
	}
	res := &Result{SQLite: filepath.Join(cfg.OutDir, cfg.Name+".sqlite")}
	if err := copyFile(cfg.Source, res.SQLite); err != nil {
		return nil, nil, err
	}
	for _, suffix := range []string{"-journal", "-wal", "-shm"} {
		_ = os.Remove(res.SQLite + suffix)
	}
	if cfg.NoCSV {
		return res, nil, nil
	}
	orig, err := readCSVLines(cfg.SourceCSV)
	if err != nil {
		return nil, nil, err
	}
	res.CSVDir = filepath.Join(cfg.OutDir, cfg.Name+"-csv")
	if err := os.MkdirAll(res.CSVDir, 0o755); err != nil {
		return nil, nil, err
	}
	res.CSV = filepath.Join(res.CSVDir, cfg.Name+"_cuda_api_trace.csv")
	return res, orig, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// thread is one thread that issues unrelated calls.
type thread struct {
	pid, tid   int64
	gtid, gpid int64
	name       string
	prio       int64
	next       int64 // start of its next call
	stream     int64 // CUDA stream its GPU work goes to
	ctx        int64
	asyncLeft  int // cudaMemcpyAsync calls it may still make
	gpuFree    int64
	csvPrefix  []byte // ",Pid,Tid,T-Pri,Thread Name\n" tail, pre-rendered
	nvtxUntil  int64
}

// globalID encodes nsys's serialized GlobalId: pid in bits 24..47, tid in
// bits 0..23, and the high bits the export sets on every id.
func globalID(high, pid, tid int64) int64 { return high | pid<<24 | tid }

// gen holds the state of one Generate call.
type gen struct {
	cfg Config
	db  *sql.DB
	tx  *sql.Tx
	res *Result
	rng *rand.Rand

	high            int64 // high bits of the source's global ids
	progPID         int64
	progGTID        int64
	maxCorr         int64
	maxGrid         int64
	nextString      int64
	eventClass      any
	runtimeCols     []string
	memcpyCols      []string
	kernelCols      []string
	nvtxCols        []string
	memcpyTemplate  []any
	kernelTemplate  []any
	nvtxTemplate    []any
	pushPop         int64
	memKindPinned   int64
	memKindDevice   int64
	memKindPageable int64
	copyHtoD        int64
	copyDtoH        int64
	copyDtoD        int64
	strings         map[string]int64
}

// inspect reads what the generator needs from the source: the program's
// thread and time span, id ranges, and template rows for the GPU records.
func (g *gen) inspect() error {
	q := func(query string, dst ...any) error { return g.db.QueryRow(query).Scan(dst...) }
	// The program's thread: the one with the most cudaMemcpyAsync calls.
	err := q(`SELECT r.globalTid FROM `+tabRuntime+` r JOIN `+tabStrings+` s ON s.id = r.nameId
		WHERE s.value LIKE 'cudaMemcpyAsync%' GROUP BY r.globalTid ORDER BY count(*) DESC LIMIT 1`, &g.progGTID)
	if errors.Is(err, sql.ErrNoRows) {
		err = q(`SELECT globalTid FROM `+tabRuntime+` GROUP BY globalTid ORDER BY count(*) DESC LIMIT 1`, &g.progGTID)
	}
	if err != nil {
		return fmt.Errorf("bigcapture: reading the program's thread: %w", err)
	}
	g.high = g.progGTID &^ (1<<48 - 1)
	g.progPID = (g.progGTID >> 24) & 0xFFFFFF
	g.res.LessonPID, g.res.LessonTID = g.progPID, g.progGTID&0xFFFFFF
	if err := q(`SELECT min(start), max("end") FROM `+tabRuntime+` WHERE globalTid = `+strconv.FormatInt(g.progGTID, 10),
		&g.res.LessonStart, &g.res.LessonEnd); err != nil {
		return err
	}
	if err := q(`SELECT count(*) FROM `+tabRuntime, &g.res.SourceRuntime); err != nil {
		return err
	}
	if err := q(`SELECT max(m) FROM (SELECT max(ifnull(correlationId, 0)) m FROM `+tabRuntime+
		` UNION ALL SELECT max(ifnull(correlationId, 0)) FROM `+tabMemcpy+
		` UNION ALL SELECT max(ifnull(correlationId, 0)) FROM `+tabKernel+`)`, &g.maxCorr); err != nil {
		return err
	}
	if err := q(`SELECT ifnull(max(gridId), 0) FROM `+tabKernel, &g.maxGrid); err != nil {
		return err
	}
	if err := q(`SELECT max(id) + 1 FROM `+tabStrings, &g.nextString); err != nil {
		return err
	}
	if err := q(`SELECT eventClass FROM `+tabRuntime+` WHERE globalTid = `+strconv.FormatInt(g.progGTID, 10)+` LIMIT 1`, &g.eventClass); err != nil {
		return err
	}
	if err := g.readEnums(); err != nil {
		return err
	}
	if g.runtimeCols, err = g.columns(tabRuntime); err != nil {
		return err
	}
	if g.memcpyCols, g.memcpyTemplate, err = g.template(tabMemcpy, ""); err != nil {
		return err
	}
	if g.kernelCols, g.kernelTemplate, err = g.template(tabKernel, ""); err != nil {
		return err
	}
	if g.nvtxCols, g.nvtxTemplate, err = g.template(tabNVTX, "eventType = "+strconv.FormatInt(g.pushPop, 10)); err != nil {
		return err
	}
	return g.readStrings()
}

// readEnums reads the ids of the enum values the generated rows use.
func (g *gen) readEnums() error {
	for _, e := range []struct {
		dst         *int64
		table, name string
	}{
		{&g.pushPop, nsysdb.TableEventType, nsysdb.EventPushPopRange},
		{&g.memKindPinned, nsysdb.TableMemKind, nsysdb.MemKindPinned},
		{&g.memKindDevice, nsysdb.TableMemKind, nsysdb.MemKindDevice},
		{&g.memKindPageable, nsysdb.TableMemKind, nsysdb.MemKindPageable},
		{&g.copyHtoD, nsysdb.TableCopyOper, nsysdb.CopyOperHtoD},
		{&g.copyDtoH, nsysdb.TableCopyOper, nsysdb.CopyOperDtoH},
		{&g.copyDtoD, nsysdb.TableCopyOper, nsysdb.CopyOperDtoD},
	} {
		if err := g.db.QueryRow(`SELECT id FROM ` + e.table + ` WHERE name = '` + e.name + `'`).Scan(e.dst); err != nil {
			return fmt.Errorf("bigcapture: %s has no %s: %w", e.table, e.name, err)
		}
	}
	return nil
}

// readStrings indexes the string table by value (the first id of each).
func (g *gen) readStrings() error {
	g.strings = map[string]int64{}
	rows, err := g.db.Query(`SELECT id, value FROM ` + tabStrings)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var v string
		if err := rows.Scan(&id, &v); err != nil {
			return err
		}
		if _, ok := g.strings[v]; !ok {
			g.strings[v] = id
		}
	}
	return rows.Err()
}

// columns lists a table's columns in order.
func (g *gen) columns(table string) ([]string, error) {
	rows, err := g.db.Query(`PRAGMA table_info("` + table + `")`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var (
			cid           int
			name          string
			typ, dflt     sql.NullString
			notnull, pkey int
		)
		if err := rows.Scan(&cid, &name, &typ, &notnull, &dflt, &pkey); err != nil {
			return nil, err
		}
		cols = append(cols, name)
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("bigcapture: the source has no table %s", table)
	}
	return cols, rows.Err()
}

// template returns a table's columns and one of its rows (of the program's
// process), whose values the added rows keep except where overridden.
func (g *gen) template(table, where string) ([]string, []any, error) {
	cols, err := g.columns(table)
	if err != nil {
		return nil, nil, err
	}
	q := `SELECT * FROM "` + table + `"`
	if where != "" {
		q += ` WHERE ` + where
	}
	rows, err := g.db.Query(q + ` LIMIT 1`)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if !rows.Next() {
		return nil, nil, fmt.Errorf("bigcapture: the source's %s is empty; nothing to model added rows on", table)
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, nil, err
	}
	for i, v := range vals {
		if b, ok := v.([]byte); ok {
			vals[i] = string(b)
		}
	}
	return cols, vals, rows.Err()
}

// str returns the StringIds id of s, adding it when new.
func (g *gen) str(s string) (int64, error) {
	if id, ok := g.strings[s]; ok {
		return id, nil
	}
	id := g.nextString
	if _, err := g.tx.Exec(`INSERT INTO `+tabStrings+` (id, value) VALUES (?, ?)`, id, s); err != nil {
		return 0, err
	}
	g.nextString++
	g.strings[s] = id
	return id, nil
}

// apiKind says what an added API call does.
type apiKind int

const (
	kindPlain apiKind = iota
	kindMemcpy
	kindLaunch
)

// apiName is one API the added calls use, with its typical duration.
type apiName struct {
	name       string
	minNs      int64
	maxNs      int64
	weight     int
	id         int64
	csvName    []byte
	copyKind   int // for memcpy APIs: 0 HtoD, 1 DtoH, 2 DtoD
	isAsyncAPI bool
}

// The unrelated calls: what a training step's threads call between kernels.
var plainAPIs = []apiName{
	{name: "cudaEventRecord_v3020", minNs: 1500, maxNs: 6000, weight: 20},
	{name: "cudaStreamSynchronize_v3020", minNs: 2000, maxNs: 400000, weight: 6},
	{name: "cudaMemsetAsync_v3020", minNs: 2500, maxNs: 9000, weight: 6},
	{name: "cuCtxGetCurrent", minNs: 120, maxNs: 600, weight: 20},
	{name: "cudaStreamWaitEvent_v3020", minNs: 900, maxNs: 4000, weight: 12},
	{name: "cudaEventQuery_v3020", minNs: 400, maxNs: 2000, weight: 10},
	{name: "cudaGetDevice_v3020", minNs: 150, maxNs: 700, weight: 12},
	{name: "cudaStreamIsCapturing_v10000", minNs: 200, maxNs: 900, weight: 8},
	{name: "cudaGetLastError_v3020", minNs: 100, maxNs: 400, weight: 6},
}

var memcpyAPIs = []apiName{
	{name: "cuMemcpyHtoDAsync_v2", minNs: 3000, maxNs: 15000, weight: 4, copyKind: 0},
	{name: "cuMemcpyDtoHAsync_v2", minNs: 3000, maxNs: 15000, weight: 3, copyKind: 1},
	{name: "cuMemcpyDtoDAsync_v2", minNs: 2500, maxNs: 8000, weight: 3, copyKind: 2},
	// A few cudaMemcpyAsync calls on other threads, always fewer per thread
	// than the program makes (see asyncPerThread).
	{name: "cudaMemcpyAsync_v3020", minNs: 3000, maxNs: 20000, weight: 1, copyKind: 0, isAsyncAPI: true},
}

var launchAPIs = []apiName{
	{name: "cudaLaunchKernel_v7000", minNs: 2500, maxNs: 12000, weight: 4},
	{name: "cuLaunchKernel", minNs: 2000, maxNs: 9000, weight: 1},
}

// kernelNames are (demangled, short) names of the unrelated kernels.
var kernelNames = [][2]string{
	{"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char *, 3>>(int, T2, T3)", "vectorized_elementwise_kernel"},
	{"sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"},
	{"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>>(T3)", "reduce_kernel"},
	{"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096UL>)", "ncclDevKernel_AllReduce_Sum_f32_RING_LL"},
	{"void cunn_SoftMaxForward<4, float, float, float, Epilogue>(T4 *, const T2 *, int)", "cunn_SoftMaxForward"},
}

// asyncPerThread caps the cudaMemcpyAsync calls of each unrelated thread
// below the program's 22, so that the program's thread still stands out.
const asyncPerThread = 8

// otherPID is the process id of the unrelated process.
const otherPID = 4242

func pick(rng *rand.Rand, apis []apiName, total int) *apiName {
	x := rng.IntN(total)
	for i := range apis {
		if x < apis[i].weight {
			return &apis[i]
		}
		x -= apis[i].weight
	}
	return &apis[len(apis)-1]
}

func weights(apis []apiName) int {
	n := 0
	for _, a := range apis {
		n += a.weight
	}
	return n
}

// run adds the threads, processes, strings and rows, and streams the CSV.
func (g *gen) run(csvw *csvWriter) error {
	// Threads: 8 more of the program's process, 8 of another process.
	var threads []*thread
	type tdef struct {
		pid, tid int64
		name     string
	}
	var defs []tdef
	for i := 0; i < 8; i++ {
		defs = append(defs, tdef{g.progPID, g.progPID + 1000 + int64(i), fmt.Sprintf("worker-%d", i)})
	}
	otherNames := []string{"python3", "pt_autograd_0", "pt_autograd_1", "pt_data_pin", "nccl-proxy", "pt_main_thread", "dataloader-0", "dataloader-1"}
	for i, n := range otherNames {
		defs = append(defs, tdef{otherPID, otherPID + int64(i), n})
	}
	for i, d := range defs {
		t := &thread{pid: d.pid, tid: d.tid, gtid: globalID(g.high, d.pid, d.tid), gpid: globalID(g.high, d.pid, 0),
			name: d.name, prio: 20, stream: 100 + int64(i), asyncLeft: asyncPerThread}
		t.ctx = 1
		if d.pid != g.progPID {
			t.ctx = 2
		}
		nameID, err := g.str(d.name)
		if err != nil {
			return err
		}
		if _, err := g.tx.Exec(`INSERT INTO `+tabThreads+` (nameId, priority, globalTid) VALUES (?, ?, ?)`, nameID, t.prio, t.gtid); err != nil {
			return err
		}
		t.csvPrefix = []byte(fmt.Sprintf(",%d,%d,%d,%s\n", t.pid, t.tid, t.prio, d.name))
		threads = append(threads, t)
	}
	if _, err := g.tx.Exec(`INSERT INTO `+tabProcs+` (globalPid, pid, name) VALUES (?, ?, ?)`,
		globalID(g.high, otherPID, 0), otherPID, "python3"); err != nil {
		return err
	}
	// The threads' streams, listed as nsys lists a program's streams where
	// the source lists them (a record on a stream it does not list is
	// refused as damage).
	var lists int
	if err := g.tx.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, tabStreams).Scan(&lists); err != nil {
		return err
	}
	for _, t := range threads {
		if lists == 0 {
			break
		}
		if _, err := g.tx.Exec(`INSERT INTO `+tabStreams+` (streamId, hwId, vmId, processId, contextId, priority, flag) VALUES (?, 0, 1, ?, ?, 0, 2)`,
			t.stream, t.pid, t.ctx); err != nil {
			return err
		}
	}
	// And their contexts, on device 0, where the source lists the
	// program's (work on a context it does not list for its process is
	// refused as damage).
	if err := g.tx.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, tabContexts).Scan(&lists); err != nil {
		return err
	}
	for _, t := range threads {
		if lists == 0 {
			break
		}
		if _, err := g.tx.Exec(`INSERT INTO `+tabContexts+` (nullStreamId, hwId, vmId, processId, deviceId, contextId)
			SELECT 7, 0, 1, ?1, 0, ?2 WHERE NOT EXISTS (SELECT 1 FROM `+tabContexts+` WHERE processId = ?1 AND deviceId = 0 AND contextId = ?2)`,
			t.pid, t.ctx); err != nil {
			return err
		}
	}
	plainAPIs := append([]apiName(nil), plainAPIs...)
	memcpyAPIs := append([]apiName(nil), memcpyAPIs...)
	launchAPIs := append([]apiName(nil), launchAPIs...)
	for _, set := range [][]apiName{plainAPIs, memcpyAPIs, launchAPIs} {
		for i := range set {
			id, err := g.str(set[i].name)
			if err != nil {
				return err
			}
			set[i].id = id
			set[i].csvName = []byte(set[i].name)
		}
	}
	type kname struct{ demangled, short int64 }
	var knames []kname
	for _, k := range kernelNames {
		d, err := g.str(k[0])
		if err != nil {
			return err
		}
		s, err := g.str(k[1])
		if err != nil {
			return err
		}
		knames = append(knames, kname{d, s})
	}
	nvtxNames := []string{"forward", "backward", "optimizer.step", "data_loader.next"}

	// Time layout: the added calls run from early in the capture to one
	// lesson-length past its end, so they lie before, among and after the
	// program's calls. Each thread's calls follow one another.
	n := g.cfg.Runtime
	spanStart := min(int64(1_000_000), g.res.LessonStart/2)
	spanEnd := g.res.LessonEnd + (g.res.LessonEnd - g.res.LessonStart)
	g.res.SpanStart = spanStart
	period := int64(1)
	if n > 0 {
		period = max((spanEnd-spanStart)*int64(len(threads))/int64(n), 2000)
	}
	for _, t := range threads {
		t.next = spanStart + g.rng.Int64N(period)
	}

	rt, err := newBatchInserter(g.tx, tabRuntime, g.runtimeCols, 64)
	if err != nil {
		return err
	}
	defer rt.close()
	mc, err := newBatchInserter(g.tx, tabMemcpy, g.memcpyCols, 32)
	if err != nil {
		return err
	}
	defer mc.close()
	kn, err := newBatchInserter(g.tx, tabKernel, g.kernelCols, 16)
	if err != nil {
		return err
	}
	defer kn.close()
	nv, err := newBatchInserter(g.tx, tabNVTX, g.nvtxCols, 16)
	if err != nil {
		return err
	}
	defer nv.close()

	rtRow := make([]any, len(g.runtimeCols))
	rtIdx := indexOf(g.runtimeCols)
	mcRow := make([]any, len(g.memcpyCols))
	mcIdx := indexOf(g.memcpyCols)
	knRow := make([]any, len(g.kernelCols))
	knIdx := indexOf(g.kernelCols)
	nvRow := make([]any, len(g.nvtxCols))
	nvIdx := indexOf(g.nvtxCols)
	set := func(row []any, idx map[string]int, col string, v any) {
		if i, ok := idx[col]; ok {
			row[i] = v
		}
	}
	plainW, memcpyW, launchW := weights(plainAPIs), weights(memcpyAPIs), weights(launchAPIs)
	copySizes := []int64{4096, 65536, 1 << 20, 4 << 20, 16 << 20}
	corr := g.maxCorr
	grid := g.maxGrid

	for i := 0; i < n; i++ {
		// The thread whose next call comes first.
		t := threads[0]
		for _, u := range threads[1:] {
			if u.next < t.next {
				t = u
			}
		}
		kind := kindPlain
		switch {
		case i%g.cfg.KernelEvery == 0:
			kind = kindLaunch
		case i%g.cfg.MemcpyEvery == g.cfg.MemcpyEvery/2:
			kind = kindMemcpy
		}
		var api *apiName
		switch kind {
		case kindLaunch:
			api = pick(g.rng, launchAPIs, launchW)
		case kindMemcpy:
			api = pick(g.rng, memcpyAPIs, memcpyW)
			if api.isAsyncAPI {
				if t.asyncLeft == 0 {
					api = &memcpyAPIs[0]
				} else {
					t.asyncLeft--
				}
			}
		default:
			api = pick(g.rng, plainAPIs, plainW)
		}
		start := t.next
		dur := api.minNs + g.rng.Int64N(api.maxNs-api.minNs+1)
		dur = min(dur, period*7/10)
		if dur < 1 {
			dur = 1
		}
		end := start + dur
		gap := period - dur
		if gap < 2 {
			gap = 2
		}
		t.next = end + gap/2 + g.rng.Int64N(gap)
		corr++
		switch {
		case start < g.res.LessonStart:
			g.res.Before++
		case start <= g.res.LessonEnd:
			g.res.Among++
		default:
			g.res.After++
		}
		g.res.SpanEnd = max(g.res.SpanEnd, end)

		clear(rtRow)
		set(rtRow, rtIdx, "start", start)
		set(rtRow, rtIdx, "end", end)
		set(rtRow, rtIdx, "eventClass", g.eventClass)
		set(rtRow, rtIdx, "globalTid", t.gtid)
		set(rtRow, rtIdx, "correlationId", corr)
		set(rtRow, rtIdx, "nameId", api.id)
		set(rtRow, rtIdx, "returnValue", int64(0))
		if err := rt.add(rtRow); err != nil {
			return err
		}
		g.res.AddedRuntime++

		// GPU work of the call, queued on the thread's stream.
		gpuStart := max(end+1000+g.rng.Int64N(8000), t.gpuFree)
		switch kind {
		case kindMemcpy:
			copy(mcRow, g.memcpyTemplate)
			b := copySizes[g.rng.IntN(len(copySizes))]
			kindID, src, dst := g.copyHtoD, g.memKindPinned, g.memKindDevice
			switch api.copyKind {
			case 1:
				kindID, src, dst = g.copyDtoH, g.memKindDevice, g.memKindPinned
			case 2:
				kindID, src, dst = g.copyDtoD, g.memKindDevice, g.memKindDevice
			}
			gpuEnd := gpuStart + 1500 + b/40 // about 40 GB/s
			set(mcRow, mcIdx, "start", gpuStart)
			set(mcRow, mcIdx, "end", gpuEnd)
			set(mcRow, mcIdx, "contextId", t.ctx)
			set(mcRow, mcIdx, "streamId", t.stream)
			set(mcRow, mcIdx, "correlationId", corr)
			set(mcRow, mcIdx, "globalPid", t.gpid)
			set(mcRow, mcIdx, "bytes", b)
			set(mcRow, mcIdx, "copyKind", kindID)
			set(mcRow, mcIdx, "srcKind", src)
			set(mcRow, mcIdx, "dstKind", dst)
			if err := mc.add(mcRow); err != nil {
				return err
			}
			t.gpuFree = gpuEnd
			g.res.AddedMemcpy++
		case kindLaunch:
			copy(knRow, g.kernelTemplate)
			k := knames[g.rng.IntN(len(knames))]
			grid++
			gpuEnd := gpuStart + 2000 + g.rng.Int64N(200000)
			set(knRow, knIdx, "start", gpuStart)
			set(knRow, knIdx, "end", gpuEnd)
			set(knRow, knIdx, "contextId", t.ctx)
			set(knRow, knIdx, "streamId", t.stream)
			set(knRow, knIdx, "correlationId", corr)
			set(knRow, knIdx, "globalPid", t.gpid)
			set(knRow, knIdx, "demangledName", k.demangled)
			set(knRow, knIdx, "shortName", k.short)
			set(knRow, knIdx, "mangledName", nil)
			set(knRow, knIdx, "gridId", grid)
			if err := kn.add(knRow); err != nil {
				return err
			}
			t.gpuFree = gpuEnd
			g.res.AddedKernels++
		}

		// An NVTX range on the thread now and then, spanning its next calls.
		if g.cfg.NVTXEvery > 0 && i%g.cfg.NVTXEvery == g.cfg.NVTXEvery/3 && start >= t.nvtxUntil {
			copy(nvRow, g.nvtxTemplate)
			rangeEnd := start + period*int64(5+g.rng.IntN(20))
			set(nvRow, nvIdx, "start", start-100)
			set(nvRow, nvIdx, "end", rangeEnd)
			set(nvRow, nvIdx, "eventType", g.pushPop)
			set(nvRow, nvIdx, "text", nvtxNames[g.rng.IntN(len(nvtxNames))])
			set(nvRow, nvIdx, "globalTid", t.gtid)
			if err := nv.add(nvRow); err != nil {
				return err
			}
			t.nvtxUntil = rangeEnd
			g.res.AddedNVTX++
		}

		if csvw != nil {
			if err := csvw.add(start, dur, api.csvName, corr, t.csvPrefix); err != nil {
				return err
			}
		}
	}
	for _, b := range []*batchInserter{rt, mc, kn, nv} {
		if err := b.flush(); err != nil {
			return err
		}
	}
	return nil
}

func indexOf(cols []string) map[string]int {
	m := make(map[string]int, len(cols))
	for i, c := range cols {
		m[c] = i
	}
	return m
}

// batchInserter inserts rows through one prepared multi-row INSERT, and a
// one-row INSERT for the remainder.
type batchInserter struct {
	tx    *sql.Tx
	table string
	cols  []string
	size  int
	many  *sql.Stmt
	one   *sql.Stmt
	args  []any
	rows  int
}

func newBatchInserter(tx *sql.Tx, table string, cols []string, size int) (*batchInserter, error) {
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = `"` + c + `"`
	}
	tuple := "(" + strings.TrimSuffix(strings.Repeat("?,", len(cols)), ",") + ")"
	head := `INSERT INTO "` + table + `" (` + strings.Join(quoted, ",") + `) VALUES `
	many, err := tx.Prepare(head + strings.TrimSuffix(strings.Repeat(tuple+",", size), ","))
	if err != nil {
		return nil, err
	}
	one, err := tx.Prepare(head + tuple)
	if err != nil {
		many.Close()
		return nil, err
	}
	return &batchInserter{tx: tx, table: table, cols: cols, size: size, many: many, one: one,
		args: make([]any, 0, size*len(cols))}, nil
}

func (b *batchInserter) add(row []any) error {
	b.args = append(b.args, row...)
	b.rows++
	if b.rows < b.size {
		return nil
	}
	if _, err := b.many.Exec(b.args...); err != nil {
		return fmt.Errorf("bigcapture: inserting into %s: %w", b.table, err)
	}
	b.args, b.rows = b.args[:0], 0
	return nil
}

func (b *batchInserter) flush() error {
	w := len(b.cols)
	for i := 0; i < b.rows; i++ {
		if _, err := b.one.Exec(b.args[i*w : (i+1)*w]...); err != nil {
			return fmt.Errorf("bigcapture: inserting into %s: %w", b.table, err)
		}
	}
	b.args, b.rows = b.args[:0], 0
	return nil
}

func (b *batchInserter) close() {
	b.many.Close()
	b.one.Close()
}

// csvLine is one data row of the source's CSV report, kept verbatim.
type csvLine struct {
	start int64
	text  string // with its newline
}

// readCSVLines reads the source's cuda_api_trace report, checking its header.
func readCSVLines(path string) ([]csvLine, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bigcapture: the source's cuda_api_trace report: %w", err)
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	lines := strings.SplitAfter(text, "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != CSVHeader {
		return nil, fmt.Errorf("bigcapture: %s does not start with the cuda_api_trace header %q", path, CSVHeader)
	}
	var out []csvLine
	for i, l := range lines[1:] {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if !strings.HasSuffix(l, "\n") {
			l += "\n"
		}
		f, _, _ := strings.Cut(l, ",")
		start, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("bigcapture: %s row %d: bad start %q", path, i+1, f)
		}
		out = append(out, csvLine{start, l})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].start < out[j].start })
	return out, nil
}

// csvWriter streams the scaled report: the source's rows merged by start
// with the added rows, which arrive in start order.
type csvWriter struct {
	f    *os.File
	w    *bufio.Writer
	orig []csvLine
	buf  []byte
	rows int
}

func newCSVWriter(path string, orig []csvLine) (*csvWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if _, err := w.WriteString(CSVHeader + "\n"); err != nil {
		f.Close()
		return nil, err
	}
	return &csvWriter{f: f, w: w, orig: orig, buf: make([]byte, 0, 256)}, nil
}

func (c *csvWriter) flushOrig(upTo int64) error {
	for len(c.orig) > 0 && c.orig[0].start <= upTo {
		if _, err := c.w.WriteString(c.orig[0].text); err != nil {
			return err
		}
		c.orig = c.orig[1:]
		c.rows++
	}
	return nil
}

func (c *csvWriter) add(start, dur int64, name []byte, corr int64, tail []byte) error {
	if err := c.flushOrig(start); err != nil {
		return err
	}
	b := c.buf[:0]
	b = strconv.AppendInt(b, start, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, dur, 10)
	b = append(b, ',')
	b = append(b, name...)
	b = append(b, ",0,"...)
	b = strconv.AppendInt(b, corr, 10)
	b = append(b, tail...)
	c.buf = b
	c.rows++
	_, err := c.w.Write(b)
	return err
}

func (c *csvWriter) close() (int, error) {
	if err := c.flushOrig(1<<63 - 1); err != nil {
		c.f.Close()
		return 0, err
	}
	if err := c.w.Flush(); err != nil {
		c.f.Close()
		return 0, err
	}
	return c.rows, c.f.Close()
}

// coverSpan moves the trace's stop (ANALYSIS_DETAILS) to half a second
// after the last record, as nsys stops a trace after its program's end, so
// that no added row ends after the trace stopped.
func (g *gen) coverSpan() error {
	var n int
	if err := g.tx.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, tabAnalysis).Scan(&n); err != nil || n == 0 {
		return err
	}
	last := `max(stopTime, (SELECT max("end") FROM ` + tabRuntime + `), ifnull((SELECT max("end") FROM ` + tabMemcpy + `), 0), ifnull((SELECT max("end") FROM ` + tabKernel + `), 0)) + 500000000`
	_, err := g.tx.Exec(`UPDATE ` + tabAnalysis + ` SET stopTime = ` + last + `, duration = ` + last + ` - startTime`)
	return err
}
