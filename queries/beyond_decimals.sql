-- The logs holding a finite value of a number column that needs more than $most decimals (one
-- computed as 2/3 does), each found at its first such value: where both do, neither file
-- rounds the column (database.written_decimals) and written_decimals.sql need not read it all.
-- Reads: views raw_a, raw_b (every column of each log as written).
-- Params: $column VARCHAR: a number column's exact name, in both logs; $most INTEGER.
-- Returns: run, one row for each log that holds such a value.
SELECT 'a' AS run
FROM (
    SELECT 1 FROM (SELECT TRY_CAST(COLUMNS(lambda c: c = $column) AS DOUBLE) AS value FROM raw_a)
    WHERE isfinite(value) AND value <> round(value, $most)
    LIMIT 1
)
UNION ALL
SELECT 'b'
FROM (
    SELECT 1 FROM (SELECT TRY_CAST(COLUMNS(lambda c: c = $column) AS DOUBLE) AS value FROM raw_b)
    WHERE isfinite(value) AND value <> round(value, $most)
    LIMIT 1
)
