-- The first row of a run's log among the rows of some questions (a score column has no row
-- numbers of its own: score_column.sql), to name it in a message.
-- Reads: table facts. Params: $run VARCHAR; $question_ids VARCHAR[].
-- Returns: row_number (0-based), question_id; one row, none when no question is found.
SELECT row_number, question_id
FROM facts
WHERE run = $run AND list_contains($question_ids, question_id)
ORDER BY row_number
LIMIT 1
