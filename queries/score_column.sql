-- One score column of the logs per run and question: the mean of its finite values over the
-- question's rows (its samples, when a log has several), a boolean read as 0 or 1.
-- Reads: views raw_a, raw_b (every column of each log as written, not only the contract's).
-- Params: $column VARCHAR: the column's exact name, numeric or boolean in both logs
--   (column_types.sql says which); $largest DOUBLE: the largest magnitude taken
--   (inputs/contract.py); $single BOOLEAN: whether either log holds it as float32, so that
--   both are read at float32 precision (as_number, queries/rules.sql).
-- Returns: run, question_id, value (DOUBLE; NULL when no row of the question has a finite
--   value: NaN and infinities are missing values), not_finite (the question's rows whose value
--   is NaN or infinite, for the warning that says so), too_large (a finite value of the question
--   beyond $largest, the largest; NULL when there is none: the log is refused), n (its finite
--   values), unscored (its rows whose value is null: samples its mean leaves out), samples (its
--   rows) and variance (of its finite values, NULL for one: the spread of its samples, as
--   sample_spread.sql gives the report's own metrics').
--   Sums run in value order: same bits.
WITH scored AS (
    SELECT 'a' AS run, question_id::VARCHAR AS question_id,
           as_number(COLUMNS(lambda c: c = $column), $single) AS value
    FROM raw_a
    UNION ALL
    SELECT 'b', question_id::VARCHAR, as_number(COLUMNS(lambda c: c = $column), $single)
    FROM raw_b
)
SELECT run, question_id,
       avg(value ORDER BY value) FILTER (WHERE isfinite(value)) AS value,
       count(*) FILTER (WHERE NOT isfinite(value)) AS not_finite,
       max_by(value, abs(value)) FILTER (WHERE isfinite(value) AND abs(value) > $largest)
           AS too_large,
       count(value) FILTER (WHERE isfinite(value)) AS n,
       count(*) FILTER (WHERE value IS NULL) AS unscored,
       count(*) AS samples,
       var_samp(value ORDER BY value) FILTER (WHERE isfinite(value)) AS variance
FROM scored
GROUP BY run, question_id
ORDER BY run, question_id
