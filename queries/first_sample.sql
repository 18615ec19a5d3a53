-- Keeps in facts only the first sample of each question of each run, by its sample id, so the
-- sections that look at single answers (retrieval by answer, diagnosis, drill-downs, metric
-- curve, label checks) read one answer per question, the same one whatever the logs' row order
-- (a re-export, another sharding). Run after question_metrics, which scores every sample;
-- relevant.sql is then run again on what is left, and the drill-downs (exemplars.sql) read it.
-- Sample ids order as numbers when every one of the run's is a whole number written plainly (an
-- integer column, or text that spells one, as a CSV or JSON Lines log holds an integer column:
-- 2 before 10), else as text: 007 is text, so no two ids are one number, and ids past 38 digits
-- (beyond HUGEINT) are text too. (question_id, sample) is unique, so the order is total. An
-- unnamed (null or blank) sample never stands beside named ones (sample_problems.sql refuses
-- it), so a run without samples keeps its one row per question.
-- Reads and changes: table facts.
WITH numbered AS (
    SELECT run, question_id, row_number, sample,
           -- digits only: a cast would also read 7.5, 1e3 and 0x10 as whole numbers
           CASE WHEN regexp_full_match(sample, '0|-?[1-9][0-9]*')
                THEN TRY_CAST(sample AS HUGEINT) END AS number
    FROM facts
)
DELETE FROM facts AS f
USING (
    -- an aggregate per question, not a window sort of every row: about half the time at 2M rows
    SELECT run, question_id,
           CASE WHEN numeric THEN arg_min(row_number, number)
                ELSE arg_min(row_number, sample) END AS kept
    FROM numbered
    JOIN (
        SELECT run, bool_and(number IS NOT NULL) AS numeric FROM numbered GROUP BY run
    ) USING (run)
    GROUP BY run, question_id, numeric
    HAVING count(*) > 1
) AS o
WHERE f.run = o.run AND f.question_id = o.question_id AND f.row_number <> o.kept
