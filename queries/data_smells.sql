-- Questions that look wrong in a golden set or a log, one row per run, kind and question.
-- Reads: tables facts and span_matches, views runs (source_id, relevant_spans, spans) and
--   passage_tables (run, doc_id, start, end).
-- Params: $k INTEGER: the prompt cutoff the metrics are named for.
-- Returns: run, kind, question_id, row_number; kind is one of
--   short_ranking       retrieved_ids (or, without them, context_ids) holds fewer than $k passages
--   repeated_passage    a passage id appears twice in the prompt (context_ids, or the first $k)
--   answerable_unlabelled  marked answerable but has no labelled evidence (a label of grade > 0),
--                       in a run that labels some question
--   duplicate_question  the same question text about the same source_id (both NULL when no
--                       source is logged) under another question_id in the same run
--   span_across_cut     a labelled span (as written, grade > 0) that passages of the run
--                       overlap but none contains whole: the passages of its passage table
--                       (--passages), else those of its rankings and prompts
SELECT run, 'short_ranking' AS kind, question_id, row_number
FROM facts
WHERE coalesce(depth, n_context) < $k
UNION ALL
SELECT run, 'repeated_passage', question_id, row_number
FROM facts
WHERE repeated_in_prompt
UNION ALL
SELECT run, 'answerable_unlabelled', question_id, row_number
FROM facts
-- evidence is a passage of grade > 0: one judged not relevant (grade 0) answers nothing; in a
-- run that labels no question (an answer-only log) no question lacks what none has
WHERE answerable AND coalesce(len(list_filter(
    relevant_ids, lambda id, i: id IS NOT NULL AND relevant_grades[i] > 0
)), 0) = 0
  AND run IN (SELECT run FROM facts WHERE has_labels)
UNION ALL
SELECT run, 'duplicate_question', question_id, row_number
FROM (
    SELECT run, question_id, row_number,
           count(DISTINCT question_id) OVER (PARTITION BY run, question, source_id) AS same_text
    FROM runs
    WHERE question IS NOT NULL
    -- a question's samples share its text: one row of each
    QUALIFY row_number() OVER (PARTITION BY run, question_id ORDER BY row_number) = 1
)
WHERE same_text > 1
UNION ALL
-- a label across a cut: passages this run logged (for any question) overlap the labelled span,
-- but none contains it whole; the labels of the sample facts holds (they agree across samples).
-- Each label as written (grade > 0, the ones measured), not the merged ones of span_matches:
-- two overlapping labels that passages hold whole one each are cut by no passage.
-- Only the passages within the reach of a document's labels (from their first start to their
-- last end) are kept before they are deduplicated: deduplicating every passage of every ranking
-- cost more than the rest of the audit. The reach is the document's, over both runs' labels
-- (span_matches' merged labels reach exactly as far as the written ones; the labels' own join
-- below keeps each run to its own): keyed on the doc_id alone, the join that sorts out every
-- passage of both runs takes a fifth less time than keyed on run and doc_id.
SELECT DISTINCT l.run, 'span_across_cut', l.question_id, l.row_number
FROM (
    SELECT DISTINCT run, question_id, row_number, s.doc_id, s.start, s."end"
    FROM (
        SELECT run, question_id, row_number, unnest(relevant_spans) AS s
        FROM runs
        SEMI JOIN facts USING (run, row_number)
        WHERE len(relevant_spans) > 0
    )
    WHERE coalesce(s.grade, 1) > 0
) AS l
JOIN (
    SELECT DISTINCT p.run, p.doc_id, p.start, p."end"
    FROM (
        -- a run with a passage table: every passage of its cutting, retrieved or not (the table
        -- lists every passage its rankings hold); else the passages its rankings and prompts hold
        SELECT run, doc_id, start, "end" FROM passage_tables
        UNION ALL
        SELECT run, unnest(retrieved_spans, recursive := true) FROM runs
        WHERE run NOT IN (SELECT run FROM passage_tables)
        UNION ALL
        SELECT run, unnest(context_spans, recursive := true) FROM runs
        WHERE run NOT IN (SELECT run FROM passage_tables)
    ) AS p
    JOIN (
        SELECT doc_id, min(start) AS lo, max("end") AS hi
        FROM span_matches
        GROUP BY doc_id
    ) AS reach
      ON p.doc_id = reach.doc_id AND p.start < reach.hi AND p."end" > reach.lo
) AS p ON p.run = l.run AND p.doc_id = l.doc_id AND p.start < l."end" AND p."end" > l.start
GROUP BY l.run, l.question_id, l.row_number, l.doc_id, l.start, l."end"
HAVING NOT bool_or(p.start <= l.start AND p."end" >= l."end")
ORDER BY run, kind, row_number
