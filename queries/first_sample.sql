-- Keeps in facts only the first row (in file order) of each question of each run, so the
-- sections that look at single answers (retrieval by answer, diagnosis, drill-downs, metric
-- curve, label checks) read one answer per question. Run after question_metrics, which scores
-- every sample; relevant.sql is then run again on what is left.
-- Reads and changes: table facts.
DELETE FROM facts AS f
WHERE EXISTS (
    SELECT 1
    FROM facts AS g
    WHERE g.run = f.run AND g.question_id = f.question_id AND g.row_number < f.row_number
)
