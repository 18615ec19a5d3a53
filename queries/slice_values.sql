-- One slice column's value for every question (A's value where both runs log one).
-- Reads: views raw_a, raw_b (any column, not only the contract's).
-- Params: $column VARCHAR: the column's exact name.
-- Returns: question_id, value (VARCHAR, NULL when neither run gives one).
WITH both_runs AS (
    SELECT run, question_id::VARCHAR AS question_id,
           COLUMNS(lambda c: c = $column)::VARCHAR AS value
    FROM (
        SELECT 'a' AS run, * FROM raw_a
        UNION ALL BY NAME
        SELECT 'b' AS run, * FROM raw_b
    )
)
SELECT question_id,
       coalesce(any_value(value) FILTER (WHERE run = 'a'),
                any_value(value) FILTER (WHERE run = 'b')) AS value
FROM both_runs
GROUP BY question_id
