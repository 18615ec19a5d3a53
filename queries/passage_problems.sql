-- The first bad row of a passage table (inputs/readers/passages.py): a missing value (an empty
-- id too, as a CSV table's empty cell reads), a negative offset, start >= end (both offsets 0 or
-- more), or a passage_id listed again.
-- Reads: view passages (passage_id, doc_id, start, end; in the file's order).
-- Returns: at most one row, the problem of the earliest row: row (1-based), problem ('missing' |
--   'negative' | 'empty' | 'repeated'), column, value (as text).
WITH numbered AS (
    SELECT * REPLACE (nullif(passage_id, '') AS passage_id, nullif(doc_id, '') AS doc_id),
           row_number() OVER () AS row
    FROM passages
),
problems AS (
    SELECT row, 'missing' AS problem,
           CASE WHEN passage_id IS NULL THEN 'passage_id' WHEN doc_id IS NULL THEN 'doc_id'
                WHEN start IS NULL THEN 'start' ELSE 'end' END AS column_name,
           NULL AS value
    FROM numbered
    WHERE passage_id IS NULL OR doc_id IS NULL OR start IS NULL OR "end" IS NULL
    UNION ALL
    SELECT row, 'negative', CASE WHEN start < 0 THEN 'start' ELSE 'end' END,
           least(start, "end")::VARCHAR
    FROM numbered
    WHERE start < 0 OR "end" < 0
    UNION ALL
    SELECT row, 'empty', 'start', start::VARCHAR
    FROM numbered
    WHERE start >= "end" AND start >= 0 AND "end" >= 0  -- a negative end is 'negative'
    UNION ALL
    SELECT row, 'repeated', 'passage_id', passage_id
    FROM (
        SELECT row, passage_id, row_number() OVER (PARTITION BY passage_id ORDER BY row) AS nth
        FROM numbered
        WHERE passage_id IS NOT NULL
    )
    WHERE nth > 1
)
SELECT row, problem, column_name, value
FROM problems
ORDER BY row, problem
LIMIT 1
