-- The one join an audit needs: every memory copy joined to the runtime call
-- that issued it, grouped by copy kind (what the sqlite3 shell takes to add
-- up host time per kind of copy). SQLite indexes the runtime table's
-- correlation ids on the fly, as it does for nsyscheck audit.
SELECT m.copyKind, count(*) AS copies, sum(m.bytes) AS bytes, sum(r."end" - r.start) AS host_ns,
       sum(m."end" - m.start) AS gpu_ns
FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m
JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r ON r.correlationId = m.correlationId
GROUP BY m.copyKind;
