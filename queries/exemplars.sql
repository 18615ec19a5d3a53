-- The rows behind the diagnosis's example questions, for drill-downs (ranked candidates with the
-- evidence marked and the prompt cutoff drawn).
-- Reads: view runs, tables facts, relevant and span_matches (the labels as scored: a label listed
--   twice keeps its highest grade, grade 0 is not relevant), macro prompt_ids (queries/rules.sql).
-- Params: $ids VARCHAR[]: the question ids to show; $k INTEGER: the prompt cutoff over
--   retrieved_ids (NULL: context_ids is the prompt).
-- Returns: run, question_id, question, retrieved_ids, relevant_ids, relevant_grades, context_ids,
--   cited_ids, answer, reference_answer, correct, faithfulness, answer_relevance, and candidates:
--   the ranking shown (retrieved_ids, else context_ids) as a list of {id, grade (the highest
--   grade of the labels the passage is relevant to, wherever precision counts it relevant: a
--   labelled passage id at its first position, every passage covering a span label by
--   --span-coverage, a passage listed twice at its first; NULL elsewhere), in_prompt (a
--   passage's first n positions, n the times the prompt lists it)}; in run
--   and file order. Of a question logged with several samples, the one facts holds: run after
--   first_sample.sql.
WITH wanted AS (
    -- the rows first, then their lists: filtering the view by question_id read every row's
    -- lists before the filter (0.49 s at 100k questions of depth 100; 0.14 s so)
    SELECT run, row_number
    FROM runs
    SEMI JOIN facts USING (run, row_number)
    WHERE list_contains($ids, question_id)
),
shown AS (
    SELECT run, question_id, question, retrieved_ids, relevant_ids, relevant_grades,
           context_ids, cited_ids, answer, reference_answer, correct, faithfulness,
           answer_relevance, row_number, coalesce(sample, '') AS sample,
           retrieved_ids IS NOT NULL AS by_retrieved,
           coalesce(retrieved_ids, context_ids) AS ranked,
           coalesce(prompt_ids(context_ids, retrieved_ids, $k), []) AS prompt
    FROM runs
    SEMI JOIN wanted USING (run, row_number)
),
labels AS (
    -- relevant places a span label at its first covering passage only; span_matches holds every
    -- passage that covers it, which precision counts (span_precision.sql)
    SELECT s.run, s.question_id,
           list({'pos': CASE WHEN s.by_retrieved THEN m.pos_retrieved ELSE m.pos_context END,
                 'grade': m.grade}) AS labels
    FROM shown AS s
    JOIN (
        SELECT run, question_id, sample, grade, pos_retrieved, pos_context
        FROM relevant
        ANTI JOIN span_matches USING (run, question_id, sample)
        UNION ALL
        SELECT run, question_id, sample, grade, pos_retrieved, pos_context
        FROM span_matches
    ) AS m USING (run, question_id, sample)
    GROUP BY s.run, s.question_id
)
SELECT s.run, s.question_id, s.question, s.retrieved_ids, s.relevant_ids, s.relevant_grades,
       s.context_ids, s.cited_ids, s.answer, s.reference_answer, s.correct, s.faithfulness,
       s.answer_relevance,
       list_transform(s.ranked, lambda id, i: {
           'id': id,
           'grade': list_max(list_transform(
               list_filter(coalesce(l.labels, []), lambda x: x.pos = i), lambda x: x.grade)),
           -- a passage listed twice reached the prompt as often as the prompt lists it: its
           -- copy past a top-2 prompt did not, a copy inside a top-5 one did
           'in_prompt': CASE WHEN list_contains(s.prompt, id)
                THEN len(list_filter(s.ranked[:i], lambda x: x = id))
                     <= len(list_filter(s.prompt, lambda x: x = id))
                ELSE false END
       }) AS candidates
FROM shown AS s
LEFT JOIN labels AS l USING (run, question_id)
ORDER BY s.run, s.row_number
