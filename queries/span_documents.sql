-- The runs no question of which has a logged passage in a document its own labels name: a
-- doc_id written otherwise in the logs than in the labels ('docs/manual09.md' against
-- 'manual09') scores every question 0, a run-wide miss no single question tells from a
-- retrieval miss. Only a run whose rankings and prompts hold no labelled span anywhere (table
-- relevant, a few rows a question) has its passages read: reading every ranking's documents
-- took a tenth of a span comparison's SQL at 20,000 questions of 100 passages.
-- Reads: table relevant; view runs (relevant_spans, retrieved_spans, context_spans). Labels of
--   grade 0 are left out, as everything that is measured leaves them out.
-- Returns: run, labelled (the number of labelled documents), a_labelled and a_logged (the first
--   labelled and the first logged document id, by name); one row per such run.
WITH unfound AS (
    SELECT run
    FROM relevant
    GROUP BY run
    HAVING bool_and(pos_retrieved IS NULL AND pos_context IS NULL)
),
questions AS (
    SELECT run,
           list_filter(relevant_spans, lambda l: coalesce(l.grade, 1) > 0 AND l.doc_id IS NOT NULL)
               AS labels,
           list_filter(list_transform(
               list_concat(coalesce(retrieved_spans, []), coalesce(context_spans, [])),
               lambda p: p.doc_id), lambda d: d IS NOT NULL) AS logged
    FROM runs
    WHERE run IN (SELECT run FROM unfound)
),
found AS (
    SELECT run, bool_or(list_has_any(logged, list_transform(labels, lambda l: l.doc_id))) AS any,
           min(logged[1]) AS a_logged
    FROM questions
    GROUP BY run
)
SELECT run, count(DISTINCT label.doc_id) AS labelled, min(label.doc_id) AS a_labelled,
       any_value(a_logged) AS a_logged
FROM (SELECT run, unnest(labels) AS label FROM questions)
JOIN found USING (run)
WHERE NOT found.any AND a_logged IS NOT NULL
GROUP BY run
ORDER BY run
