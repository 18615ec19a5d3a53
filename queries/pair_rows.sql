-- The rows of a query with one row per run and question (table run_rows, made by
-- RunDatabase.pairs) side by side for the questions in both runs, paired here rather than in
-- pandas, whose merge of ten million rows needs several times their memory.
-- Reads: table run_rows (run, question_id, row_number, any other columns).
-- Returns: question_id, then every other column of run_rows except run, twice: <column>_a
--   (run A's row) and <column>_b (run B's); by question_id, as paired.sql, so that the
--   diagnosis' intervals do not depend on the logs' row order.
SELECT
    a.question_id,
    COLUMNS(a.* EXCLUDE (question_id, run)) AS '\0_a',
    COLUMNS(b.* EXCLUDE (question_id, run)) AS '\0_b'
FROM run_rows AS a
JOIN run_rows AS b ON b.question_id = a.question_id AND b.run = 'b'
WHERE a.run = 'a'
ORDER BY a.question_id
