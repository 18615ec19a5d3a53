-- The first passage id of a run log that its passage table does not list.
-- Reads: views log (row_number (1-based), retrieved_ids, context_ids) and passages (passage_id).
--   A null id is left to the row checks.
-- Returns: at most one row: row_number, column ('retrieved_ids' | 'context_ids'), id.
SELECT row_number, column_name, id
FROM (
    SELECT row_number, 'retrieved_ids' AS column_name, unnest(retrieved_ids) AS id FROM log
    UNION ALL
    SELECT row_number, 'context_ids', unnest(context_ids) FROM log
)
ANTI JOIN passages ON passages.passage_id = id
WHERE id IS NOT NULL
ORDER BY row_number, column_name DESC
LIMIT 1
