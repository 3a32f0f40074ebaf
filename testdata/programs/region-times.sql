-- region-times.sql: region times per NVTX range name in an nsys SQLite
-- export (schema of nsys 2025.3), in plain SQL, to check other tools by.
--
-- A region is one NVTX push/pop range (eventType 59). Its host time runs
-- from the push to the pop; its region time runs from the push to the end
-- of the last GPU operation (copy, memset, kernel, whole-graph launch)
-- launched by a CUDA call that starts inside the range on the same thread,
-- or to the pop if that is later. Per name: the number of instances, the
-- median instance (the mean of the middle two for an even count) of host
-- time and of region time, and the span from the first instance's push to
-- the last instance's pop (host) or last end (region). The row "(capture)"
-- runs from the first host-device copy call to the end of the last GPU
-- operation of the capture. Times in milliseconds.
--
-- Run it with region-times.sh, which stands in empty tables for the ones a
-- capture lacks (no NVTX, no copies, no graph trace) and opens the export
-- read-only: sqlite3 alone stops at the first missing table. The working
-- tables are TEMP tables (indexed, so a capture of a million calls takes
-- seconds); the export itself is never written.
CREATE TEMP TABLE rt_ranges AS
    SELECT e.rowid AS id, COALESCE(e.text, s.value) AS name, e.start, e.end, e.globalTid AS tid
    FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId
    WHERE e.eventType = 59 AND e.end IS NOT NULL;

CREATE TEMP TABLE rt_gpu AS
    SELECT correlationId, globalPid, end FROM CUPTI_ACTIVITY_KIND_MEMCPY
    UNION ALL SELECT correlationId, globalPid, end FROM CUPTI_ACTIVITY_KIND_MEMSET
    UNION ALL SELECT correlationId, globalPid, end FROM CUPTI_ACTIVITY_KIND_KERNEL
    UNION ALL SELECT correlationId, globalPid, end FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE;

CREATE TEMP TABLE rt_gpu_end AS
    SELECT correlationId, globalPid, MAX(end) AS end FROM rt_gpu
    WHERE correlationId IS NOT NULL AND correlationId != 0
    GROUP BY correlationId, globalPid;
CREATE INDEX temp.rt_gpu_end_corr ON rt_gpu_end (correlationId, globalPid);

-- Calls that launched GPU work, with the end of that work. The low 24 bits
-- of globalTid are the thread; clearing them gives globalPid.
CREATE TEMP TABLE rt_calls AS
    SELECT a.globalTid AS tid, a.start, g.end
    FROM CUPTI_ACTIVITY_KIND_RUNTIME a
    JOIN rt_gpu_end g ON g.correlationId = a.correlationId AND g.globalPid = a.globalTid - a.globalTid % 16777216;
CREATE INDEX temp.rt_calls_tid_start ON rt_calls (tid, start);

WITH
launched AS (
    SELECT r.id, MAX(c.end) AS gpu_end
    FROM rt_ranges r JOIN rt_calls c ON c.tid = r.tid AND c.start BETWEEN r.start AND r.end
    GROUP BY r.id
),
inst AS (
    SELECT r.name, r.start, r.end, MAX(r.end, COALESCE(l.gpu_end, r.end)) AS rend
    FROM rt_ranges r LEFT JOIN launched l ON l.id = r.id
),
ord AS (
    SELECT name, start, end, rend,
           ROW_NUMBER() OVER (PARTITION BY name ORDER BY end - start) AS i,
           ROW_NUMBER() OVER (PARTITION BY name ORDER BY rend - start) AS j,
           COUNT(*) OVER (PARTITION BY name) AS n
    FROM inst
),
per_name AS (
    SELECT name, n AS instances,
           AVG(CASE WHEN i IN ((n + 1) / 2, (n + 2) / 2) THEN end - start END) / 1e6 AS host_median,
           (MAX(end) - MIN(start)) / 1e6 AS host_span,
           AVG(CASE WHEN j IN ((n + 1) / 2, (n + 2) / 2) THEN rend - start END) / 1e6 AS region_median,
           (MAX(rend) - MIN(start)) / 1e6 AS region_span,
           MIN(start) AS first
    FROM ord GROUP BY name
),
capture AS (
    SELECT MIN(c.start) AS start, (SELECT MAX(end) FROM rt_gpu) AS end
    FROM CUPTI_ACTIVITY_KIND_RUNTIME c
    JOIN CUPTI_ACTIVITY_KIND_MEMCPY m
      ON m.correlationId = c.correlationId AND m.globalPid = c.globalTid - c.globalTid % 16777216
    WHERE m.copyKind IN (1, 2)
)
SELECT name, instances, host_median_ms, host_span_ms, region_median_ms, region_span_ms FROM (
    SELECT name, instances, first,
           printf('%.3f', host_median) AS host_median_ms, printf('%.3f', host_span) AS host_span_ms,
           printf('%.3f', region_median) AS region_median_ms, printf('%.3f', region_span) AS region_span_ms
    FROM per_name
    UNION ALL
    SELECT '(capture)', 1, NULL, NULL, NULL,
           printf('%.3f', (end - start) / 1e6), printf('%.3f', (end - start) / 1e6)
    FROM capture WHERE start IS NOT NULL
)
ORDER BY first IS NULL, first;
