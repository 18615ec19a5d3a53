-- Span labels matched to the passages that cover them: the span side of the table relevant.
-- Reads: view runs (relevant_spans, retrieved_spans, context_spans).
-- Params: $coverage DOUBLE: a passage covers a labelled span when it overlaps it by at least this
--   share of the span's characters (0: any overlap).
-- Labels of grade 0 are dropped; overlapping labels of one question and document are merged first
--   (one label, the highest grade), so a character is never counted twice.
-- Each sample of a question (sample, '' when not logged) is matched on its own: its labels agree
--   with the question's other samples (sample_problems.sql), its passages need not.
-- Returns (temp table span_matches): run, question_id, sample, id (doc_id:start-end of the merged label),
--   grade, n_merged (labels merged into it), doc_id, start, end (its offsets), pos_retrieved, pos_context (1-based rank of one
--   covering passage, the other NULL); one row per (label, covering passage), and one row with
--   both NULL for a label no passage covers.
CREATE OR REPLACE TEMP TABLE span_matches AS
WITH spans AS (
    SELECT run, question_id, coalesce(sample, '') AS sample,
           unnest(relevant_spans, recursive := true)
    FROM runs
    WHERE len(relevant_spans) > 0
),
starts AS (
    SELECT run, question_id, sample, doc_id, start, "end", coalesce(grade, 1) AS grade,
           coalesce(start >= max("end") OVER (
               PARTITION BY run, question_id, sample, doc_id ORDER BY start, "end"
               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
           ), true) AS opens
    FROM spans
    WHERE coalesce(grade, 1) > 0
),
islands AS (
    SELECT *, sum(opens::INTEGER) OVER (
               PARTITION BY run, question_id, sample, doc_id ORDER BY start, "end" ROWS UNBOUNDED PRECEDING
           ) AS island
    FROM starts
),
labels AS (
    SELECT run, question_id, sample, doc_id, min(start) AS start, max("end") AS "end",
           max(grade) AS grade, count(*) AS n_merged
    FROM islands
    GROUP BY run, question_id, sample, doc_id, island
),
passages AS (
    SELECT run, question_id, coalesce(sample, '') AS sample, 'retrieved' AS list, generate_subscripts(retrieved_spans, 1) AS pos,
           unnest(retrieved_spans) AS p
    FROM runs
    UNION ALL
    SELECT run, question_id, coalesce(sample, ''), 'context', generate_subscripts(context_spans, 1), unnest(context_spans)
    FROM runs
),
covering AS (
    SELECT l.run, l.question_id, l.sample, l.doc_id, l.start, l."end", p.list, p.pos
    FROM labels AS l
    JOIN passages AS p
      ON p.run = l.run AND p.question_id = l.question_id AND p.sample = l.sample
     AND p.p.doc_id = l.doc_id
     AND p.p.start < l."end" AND p.p."end" > l.start
    WHERE least(p.p."end", l."end") - greatest(p.p.start, l.start)
          >= $coverage * (l."end" - l.start)
)
SELECT l.run, l.question_id, l.sample, l.doc_id || ':' || l.start || '-' || l."end" AS id, l.grade,
       l.n_merged, l.doc_id, l.start, l."end",
       CASE WHEN c.list = 'retrieved' THEN c.pos END AS pos_retrieved,
       CASE WHEN c.list = 'context' THEN c.pos END AS pos_context
FROM labels AS l
LEFT JOIN covering AS c USING (run, question_id, sample, doc_id, start, "end")
