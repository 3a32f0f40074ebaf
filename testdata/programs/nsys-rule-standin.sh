#!/bin/sh
# nsys-rule-standin.sh: a stand-in for `nsys analyze -r cuda_memcpy_async`
# on an SQLite export, for machines without Nsight Systems (benchmarks and
# tests of the audit with nsys on PATH). It does the rule's work, one join
# of the copies to their calls in the sqlite3 shell, and writes its CSV as
# nsys analyze does (the same columns, rows and order; TestRuleStandIn
# compares it with the real rule's output of shipped captures). It lacks
# nsys's own start-up and report loading (about 3 s of the 4.1-4.9 s nsys
# analyze took on the 600,000-copy export on the H200), so it is faster
# than the real one.
#
# Usage, as nsyscheck calls nsys:
#   nsys-rule-standin.sh analyze -r cuda_memcpy_async:rows=-1 --format csv -o BASE EXPORT.sqlite
# writes BASE_cuda_memcpy_async_rows=-1.csv. Needs sqlite3.
set -eu
[ "${1:-}" = analyze ] || { echo "nsys-rule-standin.sh: only 'analyze' is stood in for" >&2; exit 2; }
shift
rule= out= db=
while [ $# -gt 0 ]; do
	case "$1" in
	-r) rule=$2; shift ;;
	--format) [ "$2" = csv ] || { echo "nsys-rule-standin.sh: --format csv only" >&2; exit 2; }; shift ;;
	-o) out=$2; shift ;;
	*) db=$1 ;;
	esac
	shift
done
case "$rule" in
cuda_memcpy_async:rows=-1) ;;
*) echo "nsys-rule-standin.sh: only -r cuda_memcpy_async:rows=-1 is stood in for" >&2; exit 2 ;;
esac
[ -n "$out" ] && [ -f "$db" ] || { echo "nsys-rule-standin.sh: give -o BASE and an SQLite export" >&2; exit 2; }
# A runtime API async copy (cudaMemcpyAsync, cudaMemcpy2DAsync, ...; the
# rule passes over the driver API's) from or to pageable memory, joined to
# its call in its process: the longest first. A rule that finds none writes
# an empty file.
f="${out}_cuda_memcpy_async_rows=-1.csv"
: >"$f"
[ "$(sqlite3 -readonly "$db" "SELECT count(*) FROM sqlite_master WHERE name IN ('CUPTI_ACTIVITY_KIND_MEMCPY', 'CUPTI_ACTIVITY_KIND_RUNTIME')")" = 2 ] || exit 0
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
sqlite3 -readonly -list -noheader "$db" >"$rows" <<'SQL'
SELECT printf('%d,%d,%s,%s,%.3f,%d,%d,%d,%s,%d,%s', m."end" - m.start, m.start, sk.label, dk.label, m.bytes / 1000000.0,
       (m.globalPid >> 24) & 16777215, m.deviceId, m.contextId,
       CASE WHEN ifnull(m.greenContextId, 0) = 0 THEN '' ELSE m.greenContextId END, m.streamId, s.value)
FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m
JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r ON r.correlationId = m.correlationId AND (r.globalTid >> 24) = (m.globalPid >> 24)
JOIN StringIds AS s ON s.id = r.nameId
LEFT JOIN ENUM_CUDA_MEM_KIND AS sk ON sk.id = m.srcKind
LEFT JOIN ENUM_CUDA_MEM_KIND AS dk ON dk.id = m.dstKind
WHERE (sk.name = 'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE' OR dk.name = 'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE')
  AND s.value LIKE 'cudaMemcpy%Async%'
ORDER BY m."end" - m.start DESC, m.start;
SQL
if [ -s "$rows" ]; then
	echo 'Duration (ns),Start (ns),Src Kind,Dst Kind,Bytes (MB),PID,Device ID,Context ID,Green Context ID,Stream ID,API Name' >"$f"
	cat "$rows" >>"$f"
fi
