package nsyssqlite

import (
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/records"
)

// readMeta fills the metadata that META_DATA_EXPORT and
// TARGET_INFO_SYSTEM_ENV hold. Absent tables or rows leave fields empty;
// a schema version that is absent or cannot be read, like a newer major
// one, leaves the export's schema a fact the capture lacks.
func (r *reader) readMeta() {
	// unknown says why the schema is not known; every export nsys writes
	// names it.
	const unknown = "so what its tables and columns mean is not known to be what nsyscheck reads them as (Nsight Systems writes it as MAJOR.MINOR.MICRO, e.g. %s): an edited export, or another tool's (export the report again with Nsight Systems 2025.3 to be sure)"
	if r.tables[nsysdb.TableMetaExport] == "" {
		r.lack(records.FactSchema, fmt.Sprintf("the export has no %s table, which names its schema version, "+unknown, nsysdb.TableMetaExport, nsysdb.KnownSchema))
	} else {
		kv := r.nameValues(nsysdb.TableMetaExport, nsysdb.MetaProductVersion, nsysdb.MetaSchemaVersion)
		r.meta.NsysVersion = kv[nsysdb.MetaProductVersion]
		r.meta.SchemaVersion = kv[nsysdb.MetaSchemaVersion]
		r.schema = r.meta.SchemaVersion
		switch {
		case !nsysdb.ReadableSchema(r.schema):
			r.lack(records.FactSchema, fmt.Sprintf("the export's schema version (%s in %s) is %s, "+unknown,
				nsysdb.MetaSchemaVersion, nsysdb.TableMetaExport, schemaWords(r.schema), nsysdb.KnownSchema))
		case nsysdb.NewerSchema(r.schema):
			r.lack(records.FactSchema, fmt.Sprintf("the export's schema version is %s, a major version newer than %s, the one of the Nsight Systems release nsyscheck reads (2025.3): a new major version may give a table or column another meaning, so the numbers read from it may not be what they were (export the report with Nsight Systems 2025.3 to be sure)",
				r.schema, nsysdb.KnownSchema))
		}
	}
	if r.tables[nsysdb.TableSystemEnv] != "" {
		kv := r.nameValues(nsysdb.TableSystemEnv, nsysdb.EnvDriver, nsysdb.EnvCUDADriver, nsysdb.EnvOS, nsysdb.EnvDevice)
		r.meta.Job = nsysdb.JobOf(kv[nsysdb.EnvDevice])
		r.meta.Driver = kv[nsysdb.EnvDriver]
		r.meta.CUDADriver = kv[nsysdb.EnvCUDADriver]
		r.meta.OS = kv[nsysdb.EnvOS]
	}
}

// emitMeta completes the metadata (the GPUs, what nsys traced; the trace's
// duration was read before the plan, prepare) and hands it on.
func (r *reader) emitMeta() error {
	if r.h.Meta == nil {
		return nil
	}
	if err := r.readGPU(); err != nil {
		return err
	}
	r.tracing()
	return r.handled("", r.h.Meta(&r.meta))
}

// readTracing reads what nsys was asked to trace from META_DATA_CAPTURE;
// Tracing.Known stays false where the export does not say.
func (r *reader) readTracing() {
	t := r.tables[nsysdb.TableMetaCapture]
	if t == "" {
		return
	}
	cols, err := r.columns(nsysdb.TableMetaCapture, nsysdb.ColName, nsysdb.ColValue)
	if err != nil || cols == nil {
		return
	}
	rows, err := r.query(`SELECT `+q(nsysdb.ColName)+`, ifnull(`+q(nsysdb.ColValue)+`, '') FROM `+q(t)+
		` WHERE `+q(nsysdb.ColName)+` LIKE ? OR `+q(nsysdb.ColName)+` LIKE ? OR `+q(nsysdb.ColName)+` LIKE ? OR `+q(nsysdb.ColName)+` LIKE ? OR `+q(nsysdb.ColName)+` = ?`+
		` OR `+q(nsysdb.ColName)+` LIKE ? OR `+q(nsysdb.ColName)+` LIKE ?`,
		"%"+nsysdb.CaptureCUDATrace, "%"+nsysdb.CaptureNVTXTrace, "%"+nsysdb.CaptureOSRTTrace, "%"+nsysdb.CaptureGraphTrace, nsysdb.CaptureBacktrace,
		"%"+nsysdb.CaptureGPUFaults, "%"+nsysdb.CaptureCPUFaults)
	if err != nil {
		return
	}
	defer rows.Close()
	tr := &r.meta.Tracing
	for rows.Next() {
		var n, v string
		if rows.Scan(&n, &v) != nil {
			return
		}
		on := strings.EqualFold(strings.TrimSpace(v), "true")
		switch {
		case strings.HasSuffix(n, nsysdb.CaptureCUDATrace):
			tr.Known = true
			tr.CUDA = tr.CUDA || on
		case strings.HasSuffix(n, nsysdb.CaptureNVTXTrace):
			tr.NVTX = tr.NVTX || on
		case strings.HasSuffix(n, nsysdb.CaptureOSRTTrace):
			tr.OSRT = tr.OSRT || on
		case strings.HasSuffix(n, nsysdb.CaptureGraphTrace):
			if tr.GraphTrace == "" {
				tr.GraphTrace = strings.ToLower(strings.TrimSpace(v))
			}
		case n == nsysdb.CaptureBacktrace:
			tr.Backtraces = on
		case strings.HasSuffix(n, nsysdb.CaptureGPUFaults), strings.HasSuffix(n, nsysdb.CaptureCPUFaults):
			tr.PageFaults = tr.PageFaults || on
		}
	}
}

// readDuration reads the trace's duration and when it stopped from
// ANALYSIS_DETAILS, and when its session started from
// TARGET_INFO_SESSION_START_TIME, where the export records them.
func (r *reader) readDuration() {
	r.readSessionStart()
	t := r.tables[nsysdb.TableAnalysis]
	if t == "" {
		return
	}
	cols, err := r.columns(nsysdb.TableAnalysis)
	if err != nil || !cols[nsysdb.ColDuration] {
		return
	}
	var d sql.NullInt64
	if r.queryRow(`SELECT max(`+q(nsysdb.ColDuration)+`) FROM `+q(t)).Scan(&d) == nil && d.Int64 > 0 {
		r.meta.DurationNs = d.Int64
	}
	if !cols[nsysdb.ColStopTime] {
		return
	}
	if r.queryRow(`SELECT max(`+q(nsysdb.ColStopTime)+`) FROM `+q(t)).Scan(&d) == nil && d.Int64 > 0 {
		r.stop = d.Int64
	}
}

// readSessionStart reads the wall-clock time the session started, where
// the export records one (a single positive value). A table that holds
// what no session can have started at (no row, a NULL, two different
// starts, 0 ns or before 1970) is a fault of the export, not a capture
// without a start: it is said in Meta.SessionStartFault.
func (r *reader) readSessionStart() {
	t := r.tables[nsysdb.TableSessionStart]
	if t == "" {
		return
	}
	cols, err := r.columns(nsysdb.TableSessionStart)
	if err != nil || !cols[nsysdb.ColUTCEpochNs] {
		return
	}
	c := q(nsysdb.ColUTCEpochNs)
	var rows, values int64
	var lo, hi sql.NullInt64
	if r.queryRow(`SELECT count(*), count(`+c+`), min(`+c+`), max(`+c+`) FROM `+q(t)).Scan(&rows, &values, &lo, &hi) != nil {
		return
	}
	at := t + "." + nsysdb.ColUTCEpochNs
	switch {
	case rows == 0:
		r.meta.SessionStartFault = t + " holds no row, where nsys writes the session's start"
	case values < rows:
		r.meta.SessionStartFault = fmt.Sprintf("%s is NULL in %d of its %d rows", at, rows-values, rows)
	case lo.Int64 != hi.Int64:
		r.meta.SessionStartFault = fmt.Sprintf("%s holds two different starts, %d and %d ns, where a session has one", at, lo.Int64, hi.Int64)
	case lo.Int64 <= 0:
		r.meta.SessionStartFault = fmt.Sprintf("%s holds %d ns, a start at or before 1970", at, lo.Int64)
	default:
		r.meta.SessionStartNs = lo.Int64
	}
}

// readGPU names the GPU(s) the capture's copies and kernels ran on: with
// one GPU name in TARGET_INFO_GPU, that one; with several, those the copy
// and kernel tables name by device id (all where none matches). Where the
// export names no GPU it records why (a FactGPU gap): the bounds that rest
// on the GPU's link and memory are then the fastest there are. Copies or
// kernels on a device the GPUs it names do not hold are refused
// (unlistedDevice).
func (r *reader) readGPU() error {
	table := r.tables[nsysdb.TableGPU]
	if table == "" {
		r.lack(records.FactGPU, fmt.Sprintf("the export has no %s table, so the GPU is unknown: %s", nsysdb.TableGPU, nsysdb.UnknownGPUBounds))
		return nil
	}
	cols, err := r.columns(nsysdb.TableGPU)
	if err != nil {
		return err
	}
	if !cols[nsysdb.ColName] {
		r.lack(records.FactGPU, fmt.Sprintf("%s has no %s column, so the GPU is unknown: %s", table, nsysdb.ColName, nsysdb.UnknownGPUBounds))
		return nil
	}
	// vmId is a GlobalId: the GPU's host (hardware and VM ids) in the
	// bits above 48, as the records' globalPid holds theirs.
	host := "-1"
	if cols[nsysdb.ColVMID] {
		host = `ifnull(` + q(nsysdb.ColVMID) + ` >> 48, -1)`
	}
	rows, err := r.query(`SELECT ` + col(cols, nsysdb.ColID) + `, ` + col(cols, nsysdb.ColCUDADevice) + `, ifnull(` + q(nsysdb.ColName) + `, ''), ` + host + ` FROM ` + q(table))
	if err != nil {
		return r.tableError(table, err)
	}
	type gpuRow struct {
		id, cu, host int64
		name         string
	}
	var listed []gpuRow
	hosts := map[int64]bool{}
	for rows.Next() {
		var g gpuRow
		if err := rows.Scan(&g.id, &g.cu, &g.name, &g.host); err != nil {
			rows.Close()
			return r.tableError(table, err)
		}
		if g.name == "" {
			continue
		}
		listed = append(listed, g)
		hosts[g.host] = true
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return r.tableError(table, err)
	}
	// GPUs of several hosts share device ids: those of the hosts the
	// copies and kernels ran on are the capture's.
	if len(hosts) > 1 {
		used, err := r.recordHosts()
		if err != nil {
			return err
		}
		var mine []gpuRow
		for _, g := range listed {
			if used[g.host] {
				mine = append(mine, g)
			}
		}
		if len(mine) > 0 {
			listed = mine
		}
	}
	byGPU := map[int64]string{}
	byCUDA := map[int64]string{}
	all := map[string]bool{}
	for _, g := range listed {
		byGPU[g.id] = g.name
		if cols[nsysdb.ColCUDADevice] {
			byCUDA[g.cu] = g.name
		}
		all[g.name] = true
	}
	if len(all) == 0 {
		r.lack(records.FactGPU, fmt.Sprintf("%s names no GPU, so the GPU is unknown: %s", table, nsysdb.UnknownGPUBounds))
		return nil
	}
	// CUDA device id -> GPU id, from TARGET_INFO_CUDA_DEVICE where present,
	// else TARGET_INFO_GPU.cuDevice.
	cudaToGPU, err := r.readCUDADevices()
	if err != nil {
		return err
	}
	gpus := &gpuList{table: table, cudaDevice: cols[nsysdb.ColCUDADevice], byGPU: byGPU, byCUDA: byCUDA, cudaToGPU: cudaToGPU}
	if gpus.logicals, err = r.deviceTables(); err != nil {
		return err
	}
	if len(all) == 1 && r.checksAfter {
		// One GPU: the devices the records name only have to be listed,
		// which the checks after the stream see from its records
		// (checkDevices) without a pass of their own over the copies.
		r.meta.GPU = strings.Join(slices.Sorted(maps.Keys(all)), ", ")
		r.gpus = gpus
		return nil
	}
	devices, err := usedDevices(r.query, r.tables, gpus.logicals)
	if err != nil {
		return r.tableError(r.tables[nsysdb.TableMemcpy], err)
	}
	used, unlisted := gpus.resolve(devices)
	if len(all) == 1 {
		used = map[string]bool{}
	}
	if len(used) == 0 {
		used = all
	}
	r.meta.GPU = strings.Join(slices.Sorted(maps.Keys(used)), ", ")
	if len(unlisted) > 0 {
		return r.unlistedDevice(r.queryRow, gpus.logicals, unlisted[0], table)
	}
	return nil
}

// gpuList is the capture's GPUs (TARGET_INFO_GPU, table) by GPU id and by
// CUDA device id (where the table has a cuDevice column), the CUDA devices'
// GPU ids (TARGET_INFO_CUDA_DEVICE), and the logical tables whose records
// name a device (deviceTables).
type gpuList struct {
	table         string
	cudaDevice    bool
	byGPU, byCUDA map[int64]string
	cudaToGPU     map[int64]int64
	logicals      []string
}

// resolve names the GPUs of the CUDA device ids devices, and lists those
// the GPUs do not hold.
func (g *gpuList) resolve(devices []int64) (used map[string]bool, unlisted []int64) {
	used = map[string]bool{}
	for _, dev := range devices {
		if id, ok := g.cudaToGPU[dev]; ok && g.byGPU[id] != "" {
			used[g.byGPU[id]] = true
		} else if n := g.byCUDA[dev]; n != "" {
			used[n] = true
		} else if g.byGPU[dev] == "" || g.cudaDevice {
			unlisted = append(unlisted, dev)
		}
	}
	return used, unlisted
}

// checkDevices refuses, where readGPU left it to the checks after the
// stream (a capture of one GPU), a copy or kernel on a device the GPU list
// does not hold, as readGPU does: from the devices the stream saw where it
// read both tables whole, else (or where one is not listed, to say where)
// from a pass over them.
func (r *reader) checkDevices(tc tableChecks) error {
	g := r.gpus
	if g == nil {
		return nil
	}
	if tc.seen != nil {
		var devices []int64
		whole := true
		for _, logical := range g.logicals {
			s := tc.seen[logical]
			if s == nil {
				whole = false
				break
			}
			for d := range s.devices {
				devices = append(devices, d)
			}
		}
		if whole {
			if _, unlisted := g.resolve(devices); len(unlisted) == 0 {
				return nil
			}
		}
	}
	for _, logical := range g.logicals {
		r.passes = append(r.passes, r.tables[logical])
	}
	devices, err := usedDevices(tc.queryRows, r.tables, g.logicals)
	if err != nil {
		return r.tableErrorOn(tc.queryRow, r.tables[nsysdb.TableMemcpy], err)
	}
	if _, unlisted := g.resolve(devices); len(unlisted) > 0 {
		return r.unlistedDevice(tc.queryRow, g.logicals, unlisted[0], g.table)
	}
	return nil
}

// unlistedDevice refuses copies or kernels on device dev, which the GPU
// list (table) does not hold, as checkContexts refuses synchronisations
// on a device the context list does not hold: a reference that does not
// resolve, so the GPU those records ran on, and every rate bounded by it,
// is unknown. It names the first table holding such a record, how many
// rows and the first's rowid.
func (r *reader) unlistedDevice(queryRow func(string, ...any) *sql.Row, logicals []string, dev int64, table string) error {
	for _, logical := range logicals {
		t := r.tables[logical]
		var n int64
		var first sql.NullInt64
		if err := queryRow(`SELECT count(*), min(rowid) FROM `+q(t)+` WHERE `+q(nsysdb.ColDeviceID)+` = ?`, dev).Scan(&n, &first); err != nil {
			return r.tableErrorOn(queryRow, t, err)
		}
		if n == 0 {
			continue
		}
		return &inputerr.Error{Path: r.path, Where: "table " + t,
			Problem: fmt.Sprintf("%s name device %d (the first: rowid %d), which %s does not list among the capture's GPUs: a reference that does not resolve, so the GPU that work ran on, and the bounds of its rates, are unknown",
				rowCount(n), dev, first.Int64, table),
			Hint: "the export is damaged or was edited; " + nsysdb.ExportHint}
	}
	return nil
}

// deviceTables lists the logical tables of copies and kernels the export
// holds with a deviceId column.
func (r *reader) deviceTables() ([]string, error) {
	var out []string
	for _, logical := range []string{nsysdb.TableMemcpy, nsysdb.TableKernel} {
		if r.tables[logical] == "" {
			continue
		}
		cols, err := r.columns(logical)
		if err != nil {
			return nil, err
		}
		if cols[nsysdb.ColDeviceID] {
			out = append(out, logical)
		}
	}
	return out, nil
}

// recordHosts lists the hosts (a globalPid's bits above 48: hardware and
// VM ids) of the copies and kernels, for a GPU list that names GPUs of
// several hosts.
func (r *reader) recordHosts() (map[int64]bool, error) {
	out := map[int64]bool{}
	for _, logical := range []string{nsysdb.TableMemcpy, nsysdb.TableKernel} {
		t := r.tables[logical]
		if t == "" {
			continue
		}
		cols, err := r.columns(logical)
		if err != nil {
			return nil, err
		}
		if !cols[nsysdb.ColGlobalPid] {
			continue
		}
		rows, err := r.query(`SELECT DISTINCT ` + q(nsysdb.ColGlobalPid) + ` >> 48 FROM ` + q(t) + ` WHERE ` + q(nsysdb.ColGlobalPid) + ` IS NOT NULL`)
		if err != nil {
			return nil, r.tableError(t, err)
		}
		for rows.Next() {
			var h int64
			if err := rows.Scan(&h); err != nil {
				rows.Close()
				return nil, r.tableError(t, err)
			}
			out[h] = true
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, r.tableError(t, err)
		}
	}
	return out, nil
}

// usedDevices lists the CUDA device ids the logical tables name (tables
// names them in the file), in order, through query.
func usedDevices(query func(string, ...any) (*sql.Rows, error), tables map[string]string, logicals []string) ([]int64, error) {
	var parts []string
	for _, logical := range logicals {
		parts = append(parts, `SELECT DISTINCT `+q(nsysdb.ColDeviceID)+` FROM `+q(tables[logical]))
	}
	if len(parts) == 0 {
		return nil, nil
	}
	rows, err := query(strings.Join(parts, ` UNION `))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var d sql.NullInt64
		if err := rows.Scan(&d); err != nil {
			return nil, err
		}
		if d.Valid {
			out = append(out, d.Int64)
		}
	}
	slices.Sort(out)
	return out, rows.Err()
}

// readCUDADevices maps CUDA device ids to GPU ids from
// TARGET_INFO_CUDA_DEVICE; empty where the export has no such table.
func (r *reader) readCUDADevices() (map[int64]int64, error) {
	cudaToGPU := map[int64]int64{}
	t := r.tables[nsysdb.TableCUDADevice]
	if t == "" {
		return cudaToGPU, nil
	}
	dc, err := r.columns(nsysdb.TableCUDADevice)
	if err != nil {
		return nil, err
	}
	if !dc[nsysdb.ColGPUID] || !dc[nsysdb.ColCUDAID] {
		return cudaToGPU, nil
	}
	rows, err := r.query(`SELECT ` + nsysdb.Cols(nsysdb.ColCUDAID, nsysdb.ColGPUID) + ` FROM ` + q(t) + ` WHERE ` + q(nsysdb.ColCUDAID) + ` IS NOT NULL AND ` + q(nsysdb.ColGPUID) + ` IS NOT NULL`)
	if err != nil {
		return nil, r.tableError(t, err)
	}
	defer rows.Close()
	for rows.Next() {
		var cu, g int64
		if err := rows.Scan(&cu, &g); err != nil {
			return nil, r.tableError(t, err)
		}
		cudaToGPU[cu] = g
	}
	if err := rows.Err(); err != nil {
		return nil, r.tableError(t, err)
	}
	return cudaToGPU, nil
}

// emitDiags hands on what nsys wrote about its own capture
// (DIAGNOSTIC_EVENT), its severity and source named by their enums.
func (r *reader) emitDiags() error {
	t := r.tables[nsysdb.TableDiagnostic]
	if r.h.Diag == nil || t == "" {
		return nil
	}
	cols, err := r.columns(nsysdb.TableDiagnostic, nsysdb.ColText)
	if err != nil {
		return err
	}
	severity, err := r.optionalEnum(nsysdb.TableDiagSeverity)
	if err != nil {
		return err
	}
	source, err := r.optionalEnum(nsysdb.TableDiagSource)
	if err != nil {
		return err
	}
	rows, err := r.query(`SELECT ` + col(cols, nsysdb.ColTimestamp) + `, ` + col(cols, nsysdb.ColSeverity) + `, ` + col(cols, nsysdb.ColSource) +
		`, ifnull(` + q(nsysdb.ColText) + `, '') FROM ` + q(t))
	if err != nil {
		return r.tableError(t, err)
	}
	defer rows.Close()
	var d records.NsysDiag
	for rows.Next() {
		var sev, src int64
		d = records.NsysDiag{}
		if err := rows.Scan(&d.Timestamp, &sev, &src, &d.Text); err != nil {
			return r.tableError(t, err)
		}
		// A level or source the export's enums do not define was never
		// written by nsys: an error of its own would pass unread.
		for _, e := range []struct {
			col, enum string
			id        int64
			ids       map[int64]string
		}{{nsysdb.ColSeverity, nsysdb.TableDiagSeverity, sev, severity}, {nsysdb.ColSource, nsysdb.TableDiagSource, src, source}} {
			if _, ok := e.ids[e.id]; len(e.ids) > 0 && cols[e.col] && !ok {
				err := r.unknownEnumIn(nsysdb.TableDiagnostic, e.col, e.id, e.enum)
				err.Where += fmt.Sprintf(", the message at %d ns", d.Timestamp)
				return err
			}
		}
		d.Severity = nsysdb.SeverityOf(severity[sev])
		d.Source = source[src]
		if err := r.h.Diag(&d); err != nil {
			return r.handled(t, err)
		}
	}
	if err := rows.Err(); err != nil {
		return r.tableError(t, err)
	}
	return nil
}

// schemaWords names a schema version that cannot be read: absent, or as
// written (quoted, so that no byte of it passes as is).
func schemaWords(v string) string {
	if v == "" {
		return "absent"
	}
	return fmt.Sprintf("%q, not three unsigned numbers", v)
}
