-- Questions that look wrong in a golden set or a log, one row per run, kind and question.
-- Reads: tables facts and span_matches, views runs (source_id, relevant_spans, spans) and
--   passage_tables (run, doc_id, start, end).
-- Params: $k INTEGER: the prompt cutoff the metrics are named for.
-- Returns: run, kind, question_id, row_number; kind is one of
--   short_ranking       retrieved_ids (or, without them, context_ids) holds fewer than $k passages
--   repeated_passage    a passage id, or one span under two ids, appears twice in the prompt
--                       (context_ids, or the first $k)
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
-- A passage holds a label whole when it starts at or before the label and ends at or after it,
-- so some passage does when the furthest end of those starting at or before the label's start
-- reaches its end; one overlaps it when the furthest end of those starting before the label's
-- end is past its start. That furthest end is a running max over each document's passages by
-- start, looked up for each label by an ASOF join. A join of each label with every passage of
-- its document that overlaps it grows with the product of the two: 9.5 s for 20k questions on
-- one document cut into 100k passages (0.5 s this way), though it was about 1.5 s of CPU
-- faster on 100k questions over 100k documents (bench/README.md, Span labels).
-- Only the passages within the reach of a document's labels (from their first start to their
-- last end) are kept before they are grouped by start: grouping every passage of every ranking
-- cost more than the rest of the audit. The reach is the document's, over both runs' labels
-- (span_matches' merged labels reach exactly as far as the written ones; the ASOF join keeps
-- each run to its own): keyed on the doc_id alone, the join that sorts out every passage of
-- both runs takes a fifth less time than keyed on run and doc_id.
SELECT *
FROM (
    WITH labels AS (
        SELECT DISTINCT run, question_id, row_number, s.doc_id, s.start, s."end"
        FROM (
            SELECT run, question_id, row_number, unnest(relevant_spans) AS s
            FROM runs
            SEMI JOIN facts USING (run, row_number)
            WHERE len(relevant_spans) > 0
        )
        WHERE coalesce(s.grade, 1) > 0
    ),
    reached AS (
        SELECT run, doc_id, start,
               max(furthest) OVER (PARTITION BY run, doc_id ORDER BY start) AS furthest
        FROM (
            SELECT p.run, p.doc_id, p.start, max(p."end") AS furthest
            FROM (
                -- a run with a passage table: every passage of its cutting, retrieved or not
                -- (the table lists every passage its rankings hold); else the passages its
                -- rankings and prompts hold
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
            GROUP BY p.run, p.doc_id, p.start
            -- before every passage (offsets are at least 0) a start holding nothing, so that
            -- each label finds a row below
            UNION ALL
            SELECT DISTINCT run, doc_id, -1, -1 FROM labels
        )
    ),
    -- each label looks up twice: at its start (passages starting at or before it) and at its
    -- end - 1 (offsets are whole numbers: passages starting before its end), in one ASOF join;
    -- a second ASOF join over the first one's rows was planned as a join of every passage with
    -- each label (DuckDB 2.0.1 estimated its input under asof_loop_join_threshold)
    probes AS (
        SELECT *, start AS probe, true AS at_start FROM labels
        UNION ALL
        SELECT *, "end" - 1, false FROM labels
    )
    SELECT DISTINCT l.run, 'span_across_cut' AS kind, l.question_id, l.row_number
    FROM probes AS l
    ASOF JOIN reached AS r ON r.run = l.run AND r.doc_id = l.doc_id AND l.probe >= r.start
    GROUP BY l.run, l.question_id, l.row_number, l.doc_id, l.start, l."end"
    HAVING max(r.furthest) FILTER (WHERE NOT l.at_start) > l.start
       AND max(r.furthest) FILTER (WHERE l.at_start) < l."end"
)
ORDER BY run, kind, row_number
