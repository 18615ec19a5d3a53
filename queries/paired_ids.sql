-- The paired questions: the ids present in both runs, the one pairing every query reads.
-- Reads: table facts (created by then; the view reads it as it is when queried).
-- Returns (temp view paired_ids): question_id.
CREATE OR REPLACE TEMP VIEW paired_ids AS
SELECT question_id FROM facts WHERE run = 'a'
INTERSECT
SELECT question_id FROM facts WHERE run = 'b'
