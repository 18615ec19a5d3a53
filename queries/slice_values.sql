-- One slice column's value for every question (A's value where both runs log one).
-- Reads: views raw_a, raw_b (every column of each log as written, not only the contract's);
--   macro slice_value (queries/rules.sql: a NaN is no value).
-- Params: $column VARCHAR: the column's exact name; $columns_a, $columns_b VARCHAR[]: the
--   columns of each log as written (queries/column_types.sql).
-- Returns: question_id, value (VARCHAR, NULL when neither run gives one), differs (both runs
--   give one and they are not the same), varies_a, varies_b (the run gives the question more
--   than one value: its rows, samples of one question, disagree).
-- A run without the column is widened by the other's (its LIMIT 0), so the column exists in
-- both; a run with it keeps its own type (widened by both, floats 2.0 and text '2' were unioned
-- to text '2.0'). Nothing is added to a log's own columns, so none can collide with "run".
WITH rows_a AS (
    SELECT * FROM raw_a UNION ALL BY NAME (
        SELECT COLUMNS(lambda c: c = 'question_id'
                                 OR (c = $column AND NOT list_contains($columns_a, c)))
        FROM raw_b LIMIT 0
    )
),
rows_b AS (
    SELECT * FROM raw_b UNION ALL BY NAME (
        SELECT COLUMNS(lambda c: c = 'question_id'
                                 OR (c = $column AND NOT list_contains($columns_b, c)))
        FROM raw_a LIMIT 0
    )
),
both_runs AS (
    SELECT 'a' AS run, question_id::VARCHAR AS question_id,
           slice_value(COLUMNS(lambda c: c = $column)) AS value
    FROM rows_a
    UNION ALL
    SELECT 'b', question_id::VARCHAR, slice_value(COLUMNS(lambda c: c = $column))
    FROM rows_b
),
per_run AS (
    -- a run's rows give more than one value when their least and greatest differ (counting the
    -- distinct values took 2 s of CPU at 1M questions, this 1.1 s)
    SELECT question_id,
           any_value(value) FILTER (WHERE run = 'a') AS value_a,
           any_value(value) FILTER (WHERE run = 'b') AS value_b,
           min(value) FILTER (WHERE run = 'a') < max(value) FILTER (WHERE run = 'a') AS varies_a,
           min(value) FILTER (WHERE run = 'b') < max(value) FILTER (WHERE run = 'b') AS varies_b
    FROM both_runs
    GROUP BY question_id
)
SELECT question_id, coalesce(value_a, value_b) AS value,
       coalesce(value_a <> value_b, false) AS differs,
       -- a run without the question, or without a value for it, does not vary
       coalesce(varies_a, false) AS varies_a, coalesce(varies_b, false) AS varies_b
FROM per_run
