-- Every labelled evidence passage (grade > 0) of every question, with where each ranking put it.
-- Reads: tables facts and span_matches (a question labelled with spans takes its labels from
--   there, each merged span one label, for the samples facts still holds).
--   A label listed twice keeps its highest grade.
-- Each question's labels are ranked as one list (a handful of items) rather than by a group
-- and two windows over every label of the log, which cost about 1.5 times as much.
-- Returns (table relevant, made by RunDatabase: KEPT): run, question_id, sample, id, grade,
--   ideal_rank (1 = highest grade, then by id), n_relevant, top_grade (the question's highest,
--   which scales its nDCG gains: macro gain, queries/rules.sql), pos_retrieved, pos_context
--   (1-based first position, NULL when absent).
WITH labels AS (
    -- positions are aligned with relevant_ids (facts.sql), so an id listed twice has the same
    -- positions each time
    SELECT run, question_id, sample,
           list_transform(relevant_ids, lambda id, i: {
               'neg_grade': -relevant_grades[i], 'id': id,
               'pos_retrieved': pos_retrieved[i], 'pos_context': pos_context[i]
           }) AS labels
    FROM facts
    ANTI JOIN span_matches USING (run, question_id, sample)
    UNION ALL
    SELECT run, question_id, sample,
           list({'neg_grade': -grade, 'id': id,
                 'pos_retrieved': pos_retrieved, 'pos_context': pos_context})
    FROM (
        -- a span label is found where the first passage covering it is
        SELECT run, question_id, sample, id, max(grade) AS grade,
               min(pos_retrieved) AS pos_retrieved, min(pos_context) AS pos_context
        FROM span_matches
        SEMI JOIN facts USING (run, question_id, sample)
        GROUP BY ALL
    )
    GROUP BY run, question_id, sample
),
sorted AS (
    -- evidence in ideal order: highest grade first, then by id
    SELECT run, question_id, sample,
           list_sort(list_filter(labels, lambda l: l.neg_grade < 0)) AS sorted
    FROM labels
),
evidence AS (
    -- an id listed twice keeps its first place, the one of its highest grade
    SELECT run, question_id, sample,
           CASE WHEN len(list_distinct(list_transform(sorted, lambda l: l.id))) = len(sorted)
                THEN sorted
                ELSE list_filter(sorted, lambda l, i: NOT list_contains(
                    list_transform(sorted[:i - 1], lambda e: e.id), l.id))
           END AS evidence
    FROM sorted
),
placed AS (
    SELECT run, question_id, sample, len(evidence) AS n_relevant,
           -evidence[1].neg_grade AS top_grade,
           unnest(list_transform(evidence, lambda l, i: {
               'id': l.id, 'grade': -l.neg_grade, 'ideal_rank': i,
               'pos_retrieved': l.pos_retrieved, 'pos_context': l.pos_context
           })) AS e
    FROM evidence
)
SELECT run, question_id, sample, e.id, e.grade, e.ideal_rank, n_relevant, top_grade,
       e.pos_retrieved, e.pos_context
FROM placed
