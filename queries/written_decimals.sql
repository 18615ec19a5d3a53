-- How many decimals each log's file writes a number column at: whether every finite value
-- equals itself rounded to 5, ..., 11 decimals (a value read from "0.6666666667" does, one
-- computed as 2/3 does not), and the largest finite magnitude (database.written_decimals).
-- Reads: views raw_a, raw_b (every column of each log as written).
-- Params: $column VARCHAR: a number column's exact name, in both logs.
-- Returns: run, largest (DOUBLE), at_5 ... at_11 (BOOLEAN); no row for a log without a finite
--   value of the column.
WITH v AS (
    SELECT 'a' AS run, TRY_CAST(COLUMNS(lambda c: c = $column) AS DOUBLE) AS value FROM raw_a
    UNION ALL
    SELECT 'b', TRY_CAST(COLUMNS(lambda c: c = $column) AS DOUBLE) FROM raw_b
)
SELECT run,
       max(abs(value)) AS largest,
       bool_and(value = round(value, 5)) AS at_5,
       bool_and(value = round(value, 6)) AS at_6,
       bool_and(value = round(value, 7)) AS at_7,
       bool_and(value = round(value, 8)) AS at_8,
       bool_and(value = round(value, 9)) AS at_9,
       bool_and(value = round(value, 10)) AS at_10,
       bool_and(value = round(value, 11)) AS at_11
FROM v
WHERE isfinite(value)
GROUP BY run
ORDER BY run
