-- Marks every sample of a question some sample of which repeats a passage in its prompt, before
-- first_sample.sql keeps one sample a question: the data smell (data_smells.sql) reads the kept
-- sample, while each sample's prompt is scored (a repeat in the second sample counts in the
-- question's mean as in the first's).
-- Reads and changes: table facts (repeated_in_prompt).
UPDATE facts AS f
SET repeated_in_prompt = true
FROM (
    SELECT run, question_id
    FROM facts
    GROUP BY run, question_id
    HAVING count(*) > 1 AND bool_or(repeated_in_prompt)
) AS r
WHERE f.run = r.run AND f.question_id = r.question_id
