-- Every labelled evidence passage (grade > 0) of every question, with where each ranking put it.
-- Reads: tables facts and span_matches (a question labelled with spans takes its labels from
--   there, each merged span one label, for the samples facts still holds).
--   A label listed twice keeps its highest grade.
-- Returns (temp table relevant): run, question_id, sample, id, grade, ideal_rank (1 = highest grade),
--   n_relevant, pos_retrieved, pos_context (1-based first position, NULL when absent).
CREATE OR REPLACE TEMP TABLE relevant AS
WITH labels AS (
    SELECT run, question_id, sample,
           unnest(relevant_ids) AS id,
           unnest(relevant_grades) AS grade,
           unnest(pos_retrieved) AS pos_retrieved,
           unnest(pos_context) AS pos_context
    FROM facts
    ANTI JOIN span_matches USING (run, question_id, sample)
    UNION ALL
    SELECT run, question_id, sample, id, grade, pos_retrieved, pos_context
    FROM span_matches
    SEMI JOIN facts USING (run, question_id, sample)
),
graded AS (
    SELECT run, question_id, sample, id, max(grade) AS grade,
           min(pos_retrieved) AS pos_retrieved, min(pos_context) AS pos_context
    FROM labels
    GROUP BY ALL
    HAVING max(grade) > 0
)
SELECT
    run,
    question_id,
    sample,
    id,
    grade,
    row_number() OVER (PARTITION BY run, question_id, sample ORDER BY grade DESC, id)
        AS ideal_rank,
    count(*) OVER (PARTITION BY run, question_id, sample) AS n_relevant,
    pos_retrieved,
    pos_context
FROM graded
