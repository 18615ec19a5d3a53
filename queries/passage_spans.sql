-- A run log's passage ids as document spans, through its passage table.
-- Reads: views log (row_number (1-based), retrieved_ids, context_ids) and passages (passage_id,
--   doc_id, start, end), every id of the log listed (passage_unknown.sql).
-- Returns: one row per row of the log, in its order: retrieved_spans and context_spans, lists of
--   STRUCT(doc_id, start, end) aligned with retrieved_ids and context_ids (NULL where the list is
--   NULL; a null id gives a null span).
WITH items AS (
    SELECT row_number, 'retrieved_ids' AS list, generate_subscripts(retrieved_ids, 1) AS pos,
           unnest(retrieved_ids) AS id
    FROM log
    UNION ALL
    SELECT row_number, 'context_ids', generate_subscripts(context_ids, 1), unnest(context_ids)
    FROM log
),
placed AS (
    SELECT i.row_number, i.list, i.pos,
           CASE WHEN p.passage_id IS NOT NULL
                THEN {'doc_id': p.doc_id, 'start': p.start, 'end': p."end"} END AS span
    FROM items AS i
    LEFT JOIN passages AS p ON p.passage_id = i.id
),
lists AS (
    SELECT row_number,
           list(span ORDER BY pos) FILTER (WHERE list = 'retrieved_ids') AS retrieved,
           list(span ORDER BY pos) FILTER (WHERE list = 'context_ids') AS context
    FROM placed
    GROUP BY row_number
)
SELECT
    CASE WHEN log.retrieved_ids IS NOT NULL THEN coalesce(lists.retrieved, []) END
        AS retrieved_spans,
    CASE WHEN log.context_ids IS NOT NULL THEN coalesce(lists.context, []) END AS context_spans
FROM log
LEFT JOIN lists USING (row_number)
ORDER BY log.row_number
