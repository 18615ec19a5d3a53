-- Paired questions whose golden labels differ between the runs: the golden set was not frozen.
-- Reads: tables facts and span_matches, and view runs for the reference answers (the label
--   correct is judged against; facts does not keep their text). Labels compare as sets of (passage, grade), grades
--   defaulting to 1 (macro labelled, queries/rules.sql); reference answers as the set of a question's samples', where both runs log
--   them. A label is compared only when both runs log it (relevant labels: relevant_ids or
--   relevant_spans; answerable), for some question: a run that logs none (a closed-book
--   baseline) has no golden set to differ from.
-- Returns: question_id, changed (comma-separated: relevant labels, answerable, reference
--   answer); in A's file order.
WITH merged AS (
    -- a question labelled with spans compares its labels as they are measured: merged where
    -- they overlap, those of grade 0 left out (span_matches); [0, 30) and [20, 50) against
    -- [0, 50) is one golden set
    SELECT run, question_id, sample, merged_labelled(id, grade) AS labelled
    FROM span_matches
    GROUP BY ALL
),
labels AS (
    SELECT f.run, f.question_id, f.row_number, f.answerable,
           coalesce(m.labelled, labelled(f.relevant_ids, f.relevant_grades)) AS labelled
    FROM facts AS f
    LEFT JOIN merged AS m USING (run, question_id, sample)
),
refs AS (
    SELECT run, question_id, list_sort(list_distinct(list(reference_answer))) AS refs
    FROM runs
    WHERE reference_answer IS NOT NULL
    GROUP BY run, question_id
),
logged AS (
    SELECT count(DISTINCT run) FILTER (WHERE has_labels) = 2 AS labels,
           count(DISTINCT run) FILTER (WHERE answerable IS NOT NULL) = 2 AS answerable
    FROM facts
),
drift AS (
    SELECT a.question_id, a.row_number,
           logged.labels AND a.labelled IS DISTINCT FROM b.labelled AS relevant_changed,
           logged.answerable AND a.answerable IS DISTINCT FROM b.answerable AS answerable_changed,
           coalesce(ra.refs <> rb.refs, false) AS reference_changed
    FROM labels AS a
    JOIN labels AS b ON a.question_id = b.question_id AND b.run = 'b'
    LEFT JOIN refs AS ra ON ra.run = 'a' AND ra.question_id = a.question_id
    LEFT JOIN refs AS rb ON rb.run = 'b' AND rb.question_id = a.question_id
    CROSS JOIN logged
    WHERE a.run = 'a'
)
SELECT question_id,
       concat_ws(', ',
           CASE WHEN relevant_changed THEN 'relevant labels' END,
           CASE WHEN answerable_changed THEN 'answerable' END,
           CASE WHEN reference_changed THEN 'reference answer' END
       ) AS changed
FROM drift
WHERE relevant_changed OR answerable_changed OR reference_changed
ORDER BY row_number
