package nsyssqlite

import (
	"fmt"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/records"
)

// streamKinds maps ENUM_CUPTI_STREAM_TYPE's ids, which nsys writes in
// TARGET_INFO_CUDA_STREAM's flag column, to the kinds of stream.
var streamKinds = map[int64]records.StreamKind{
	0: records.StreamKindUnknown, // CUPTI_ACTIVITY_STREAM_CREATE_FLAG_UNKNOWN
	1: records.StreamBlocking,    // CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT
	2: records.StreamNonBlocking, // CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING
	3: records.StreamNull,        // CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL
}

// emitStreams hands on the streams the program made with their kinds
// (TARGET_INFO_CUDA_STREAM), where the export lists them: whether a stream
// is the legacy default stream, or ordered with it, orders its work. A
// flag CUPTI does not define is refused, naming the stream's row.
func (r *reader) emitStreams() error {
	table := r.tables[nsysdb.TableCUDAStream]
	if r.h.Stream == nil || table == "" {
		return nil
	}
	cols, err := r.columns(nsysdb.TableCUDAStream, nsysdb.ColStreamID)
	if err != nil {
		return err
	}
	if !cols[nsysdb.ColStreamFlag] || !cols[nsysdb.ColProcessID] {
		return nil // an export that does not say how its streams were made
	}
	rows, err := r.query(`SELECT rowid, ` + q(nsysdb.ColProcessID) + `, ` + col(cols, nsysdb.ColContextID) + `, ` +
		q(nsysdb.ColStreamID) + `, ` + q(nsysdb.ColStreamFlag) + ` FROM ` + q(table) + ` WHERE ` +
		q(nsysdb.ColStreamID) + ` IS NOT NULL AND ` + q(nsysdb.ColProcessID) + ` IS NOT NULL`)
	if err != nil {
		return r.tableError(table, err)
	}
	defer rows.Close()
	var (
		s           records.Stream
		rowid, flag int64
	)
	for rows.Next() {
		s = records.Stream{}
		if err := rows.Scan(&rowid, &s.PID, &s.Context, &s.ID, &flag); err != nil {
			return r.tableError(table, err)
		}
		k, ok := streamKinds[flag]
		if !ok {
			return &inputerr.Error{Path: r.path, Where: fmt.Sprintf("table %s, rowid %d", table, rowid),
				Problem: fmt.Sprintf("stream %d has flag %d, which is no stream kind CUPTI writes (0-3): how the stream orders its work is unknown", s.ID, flag),
				Hint:    "the export is damaged or was edited; " + nsysdb.ExportHint}
		}
		s.Kind = k
		if err := r.h.Stream(&s); err != nil {
			return r.handled(table, err)
		}
	}
	if err := rows.Err(); err != nil {
		return r.tableError(table, err)
	}
	return nil
}
