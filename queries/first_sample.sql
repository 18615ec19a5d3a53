-- Keeps in facts only the first sample of each question of each run, by its sample id, so the
-- sections that look at single answers (retrieval by answer, diagnosis, drill-downs, metric
-- curve, label checks) read one answer per question, the same one whatever the logs' row order
-- (a re-export, another sharding). Run after question_metrics, which scores every sample;
-- relevant.sql is then run again on what is left, and the drill-downs (exemplars.sql) read it.
-- Sample ids order as numbers when every one of the run's is a whole number (an integer column,
-- or text that spells one, as a CSV or JSON Lines log holds an integer column: 2 before 10),
-- else as text (so do ids past 38 digits, beyond HUGEINT). (question_id, sample) is unique, so
-- the order is total. An unnamed (null or blank) sample never stands beside named ones
-- (sample_problems.sql refuses it), so a run without samples keeps its one row per question.
-- Reads and changes: table facts.
DELETE FROM facts AS f
USING (
    SELECT run, row_number,
           row_number() OVER (
               PARTITION BY run, question_id ORDER BY CASE WHEN numeric THEN number END, sample
           ) AS nth
    FROM (
        SELECT run, row_number, question_id, sample, number,
               bool_and(number IS NOT NULL) OVER (PARTITION BY run) AS numeric
        FROM (
            -- digits only: a cast would also read 7.5, 1e3 and 0x10 as whole numbers
            SELECT run, row_number, question_id, sample,
                   CASE WHEN regexp_full_match(sample, '-?[0-9]+')
                        THEN TRY_CAST(sample AS HUGEINT) END AS number
            FROM facts
        )
    )
) AS o
WHERE f.run = o.run AND f.row_number = o.row_number AND o.nth > 1
