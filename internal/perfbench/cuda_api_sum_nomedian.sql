-- nsys's cuda_api_sum query without the median: one GROUP BY pass over
-- CUPTI_ACTIVITY_KIND_RUNTIME with count, sum, avg, min, max and the sample
-- standard deviation (from the sums of durations and their squares).
WITH
    summary AS (
        SELECT
            nameId AS nameId,
            sum("end" - start) AS total,
            count(*) AS num,
            avg("end" - start) AS avg,
            min("end" - start) AS min,
            max("end" - start) AS max,
            CASE WHEN count(*) > 1
                THEN sqrt(max(0, (total(1.0 * ("end" - start) * ("end" - start)) - total("end" - start) * total("end" - start) / count(*)) / (count(*) - 1)))
                ELSE 0
            END AS stddev
        FROM
            CUPTI_ACTIVITY_KIND_RUNTIME
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
LEFT JOIN
    StringIds AS ids
    ON ids.id == summary.nameId
ORDER BY 2 DESC
;
