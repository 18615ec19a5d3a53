-- The question text of the given questions, for the tables that show them.
-- Reads: table facts. Params: $ids VARCHAR[]. Returns: question_id, question (A's, else B's).
SELECT question_id,
       coalesce(any_value(question) FILTER (WHERE run = 'a'),
                any_value(question) FILTER (WHERE run = 'b')) AS question
FROM facts
WHERE question_id IN (SELECT unnest($ids))
GROUP BY question_id
