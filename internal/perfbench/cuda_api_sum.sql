-- The query of nsys's cuda_api_sum report (cudaapisum.py), for the sqlite3
-- shell: nsys registers median() and stdev() as Python aggregates; here the
-- median is computed exactly with window functions (the middle row, or the
-- mean of the two middle rows, of each name's sorted durations) and stdev is
-- the sample standard deviation from the sums of durations and their squares.
WITH
    d AS (
        SELECT nameId, "end" - start AS dur
        FROM CUPTI_ACTIVITY_KIND_RUNTIME
    ),
    ranked AS (
        SELECT
            nameId,
            dur,
            row_number() OVER (PARTITION BY nameId ORDER BY dur) AS rn,
            count(*) OVER (PARTITION BY nameId) AS cnt
        FROM d
    ),
    med AS (
        SELECT nameId, avg(dur) AS med
        FROM ranked
        WHERE rn IN ((cnt + 1) / 2, (cnt + 2) / 2)
        GROUP BY 1
    ),
    summary AS (
        SELECT
            nameId AS nameId,
            sum(dur) AS total,
            count(*) AS num,
            avg(dur) AS avg,
            min(dur) AS min,
            max(dur) AS max,
            CASE WHEN count(*) > 1
                THEN sqrt(max(0, (total(1.0 * dur * dur) - total(dur) * total(dur) / count(*)) / (count(*) - 1)))
                ELSE 0
            END AS stddev
        FROM d
        GROUP BY 1
    ),
    totals AS (
        SELECT sum(total) AS total
        FROM summary
    )
SELECT
    round(summary.total * 100.0 / (SELECT total FROM totals), 1) AS "Time (%)",
    summary.total AS "Total Time (ns)",
    summary.num AS "Num Calls",
    round(summary.avg, 1) AS "Avg (ns)",
    round(med.med, 1) AS "Med (ns)",
    summary.min AS "Min (ns)",
    summary.max AS "Max (ns)",
    round(summary.stddev, 1) AS "StdDev (ns)",
    CASE substr(ids.value, -6, 2)
        WHEN '_v'
            THEN substr(ids.value, 1, length(value)-6)
        ELSE ids.value
    END AS "Name"
FROM
    summary
JOIN med USING (nameId)
LEFT JOIN
    StringIds AS ids
    ON ids.id == summary.nameId
ORDER BY 2 DESC
;
