#!/usr/bin/env bash
# region-times.sh CAPTURE.sqlite: print region-times.sql's table (CSV with a
# header) for an nsys SQLite export. The export is opened read-only; an empty
# temporary table stands in for each table the query reads that the export
# lacks (a capture without NVTX, copies, memsets, kernels or graph trace).
set -euo pipefail
db=${1:?usage: region-times.sh CAPTURE.sqlite}
[ -f "$db" ] || { echo "region-times: $db: no such file" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
declare -A cols=(
    [NVTX_EVENTS]="start INTEGER, end INTEGER, eventType INTEGER, text TEXT, textId INTEGER, globalTid INTEGER"
    [CUPTI_ACTIVITY_KIND_RUNTIME]="start INTEGER, end INTEGER, globalTid INTEGER, correlationId INTEGER"
    [CUPTI_ACTIVITY_KIND_MEMCPY]="end INTEGER, correlationId INTEGER, globalPid INTEGER, copyKind INTEGER"
    [CUPTI_ACTIVITY_KIND_MEMSET]="end INTEGER, correlationId INTEGER, globalPid INTEGER"
    [CUPTI_ACTIVITY_KIND_KERNEL]="end INTEGER, correlationId INTEGER, globalPid INTEGER"
    [CUPTI_ACTIVITY_KIND_GRAPH_TRACE]="end INTEGER, correlationId INTEGER, globalPid INTEGER"
)
have=$(sqlite3 -readonly "$db" "SELECT name FROM sqlite_master WHERE type = 'table'") || {
    echo "region-times: $db is not an SQLite database sqlite3 can read" >&2
    exit 2
}
pre=""
for t in "${!cols[@]}"; do
    grep -qx "$t" <<<"$have" || pre+="CREATE TEMP TABLE $t (${cols[$t]});"$'\n'
done
grep -qx StringIds <<<"$have" || pre+="CREATE TEMP TABLE StringIds (id INTEGER, value TEXT);"$'\n'
{ printf '%s' "$pre"; cat "$here/region-times.sql"; } | sqlite3 -readonly -header -csv "$db"
