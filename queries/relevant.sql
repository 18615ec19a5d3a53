-- Every labelled evidence passage (grade > 0) of every question, with where each ranking put it.
-- Reads: view runs. A label listed twice keeps its highest grade; relevant_grades absent: all 1.
-- Returns (temp table relevant): run, question_id, id, grade, ideal_rank (1 = highest grade),
--   n_relevant, pos_retrieved, pos_context (1-based first position, NULL when absent).
CREATE OR REPLACE TEMP TABLE relevant AS
WITH labels AS (
    SELECT run, question_id,
           unnest(relevant_ids) AS id,
           unnest(coalesce(relevant_grades, list_transform(relevant_ids, lambda x: 1))) AS grade
    FROM runs
),
graded AS (
    SELECT run, question_id, id, max(grade) AS grade
    FROM labels
    GROUP BY ALL
    HAVING max(grade) > 0
)
SELECT
    g.run,
    g.question_id,
    g.id,
    g.grade,
    row_number() OVER (PARTITION BY g.run, g.question_id ORDER BY g.grade DESC, g.id) AS ideal_rank,
    count(*) OVER (PARTITION BY g.run, g.question_id) AS n_relevant,
    nullif(list_position(r.retrieved_ids, g.id), 0) AS pos_retrieved,
    nullif(list_position(r.context_ids, g.id), 0) AS pos_context
FROM graded AS g
JOIN runs AS r USING (run, question_id)
