-- Span labels matched to the passages that cover them: the span side of the table relevant.
-- Reads: view runs (relevant_spans, retrieved_spans, context_spans); macro spans_apart
--   (queries/rules.sql).
-- Params: $coverage DOUBLE: a passage covers a labelled span when it overlaps it by at least this
--   share of the span's characters (0: any overlap).
-- Labels of grade 0 are dropped; overlapping labels of one question and document are merged first
--   (one label, the highest grade), so a character is never counted twice.
-- Each sample of a question (sample, '' when not logged) is matched on its own: its labels agree
--   with the question's other samples (sample_problems.sql), its passages need not. A row of the
--   log (row_number) is one sample of one question, the key the work below joins on.
-- Only the passages that can overlap a label are joined: the unnested rankings are first cut to
--   those in a labelled document of their row and within the reach of its labels, a filter on
--   each passage (no join), which keeps about 1 in 30 of a 100-passage ranking; the join of
--   every passage of every ranking with the labels was most of this query's time. Labels are
--   merged (two windows) only in the rows where two of them overlap.
-- Returns (temp table span_matches): run, question_id, sample, id (doc_id:start-end of the merged label),
--   grade, n_merged (labels merged into it), doc_id, start, end (its offsets), pos_retrieved, pos_context (1-based rank of one
--   covering passage, the other NULL); one row per (label, covering passage), a passage listed
--   twice in one list at its first position, and one row with both NULL for a label no passage
--   covers.
CREATE OR REPLACE TEMP TABLE span_matches AS
WITH sorted AS (
    SELECT run, row_number, question_id, coalesce(sample, '') AS sample,
           list_sort(list_filter(relevant_spans, lambda s: coalesce(s.grade, 1) > 0)) AS spans
    FROM runs
    WHERE len(relevant_spans) > 0
),
flagged AS (
    SELECT *, spans_apart(spans) AS apart FROM sorted
),
spans AS (
    SELECT run, row_number, question_id, sample, unnest(spans, recursive := true)
    FROM flagged
    WHERE NOT apart
),
starts AS (
    SELECT run, row_number, question_id, sample, doc_id, start, "end",
           coalesce(grade, 1) AS grade,
           coalesce(start >= max("end") OVER (
               PARTITION BY run, row_number, doc_id ORDER BY start, "end"
               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
           ), true) AS opens
    FROM spans
),
islands AS (
    SELECT *, sum(opens::INTEGER) OVER (
               PARTITION BY run, row_number, doc_id ORDER BY start, "end" ROWS UNBOUNDED PRECEDING
           ) AS island
    FROM starts
),
labels AS (
    SELECT run, row_number, question_id, sample, doc_id, start, "end",
           coalesce(grade, 1) AS grade, 1 AS n_merged
    FROM (
        SELECT run, row_number, question_id, sample, unnest(spans, recursive := true)
        FROM flagged
        WHERE apart
    )
    UNION ALL
    SELECT run, row_number, any_value(question_id), any_value(sample), doc_id, min(start),
           max("end"), max(grade), count(*)
    FROM islands
    GROUP BY run, row_number, doc_id, island
),
-- read by both branches below; materialised, every ranking would be copied once more
reach AS NOT MATERIALIZED (
    SELECT run, row_number, retrieved_spans, context_spans,
           list_min(list_transform(relevant_spans, lambda s: s.doc_id)) AS doc_lo,
           list_max(list_transform(relevant_spans, lambda s: s.doc_id)) AS doc_hi,
           list_min(list_transform(relevant_spans, lambda s: s.start)) AS lo,
           list_max(list_transform(relevant_spans, lambda s: s."end")) AS hi
    FROM runs
    WHERE len(relevant_spans) > 0
),
passages AS (
    SELECT run, row_number, list, pos, doc_id, start, "end"
    FROM (
        SELECT run, row_number, doc_lo, doc_hi, lo, hi, 'retrieved' AS list,
               generate_subscripts(retrieved_spans, 1) AS pos,
               unnest(retrieved_spans, recursive := true)
        FROM reach
        UNION ALL
        SELECT run, row_number, doc_lo, doc_hi, lo, hi, 'context',
               generate_subscripts(context_spans, 1), unnest(context_spans, recursive := true)
        FROM reach
    )
    WHERE start < hi AND "end" > lo AND doc_id BETWEEN doc_lo AND doc_hi
),
covering AS (
    SELECT l.run, l.row_number, l.doc_id, l.start, l."end", p.list, p.pos
    FROM labels AS l
    JOIN passages AS p
      ON p.run = l.run AND p.row_number = l.row_number AND p.doc_id = l.doc_id
     AND p.start < l."end" AND p."end" > l.start
    -- the share itself is compared: 55 / 100 and 0.55 round to the same double, where
    -- 0.55 * 100 rounds above 55 and would refuse a passage holding exactly 55% of the label
    WHERE (least(p."end", l."end") - greatest(p.start, l.start)) / (l."end" - l.start) >= $coverage
    -- a passage listed twice is at its first position only, as a passage id is (facts.sql), so
    -- precision counts it once
    QUALIFY p.pos = min(p.pos) OVER (
        PARTITION BY p.run, p.row_number, p.list, p.doc_id, p.start, p."end"
    )
)
SELECT l.run, l.question_id, l.sample, l.doc_id || ':' || l.start || '-' || l."end" AS id,
       l.grade, l.n_merged, l.doc_id, l.start, l."end",
       CASE WHEN c.list = 'retrieved' THEN c.pos END AS pos_retrieved,
       CASE WHEN c.list = 'context' THEN c.pos END AS pos_context
FROM labels AS l
LEFT JOIN covering AS c USING (run, row_number, doc_id, start, "end")
