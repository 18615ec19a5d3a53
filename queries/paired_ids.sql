-- The paired questions: the ids present in both runs, the one pairing every query reads.
-- Reads: table facts (its questions are final by then: first_sample.sql keeps a row of each).
-- Returns (temp table paired_ids): question_id. A table, made once: as a view, each query that
--   read it intersected the runs' ids again, about 0.3 s at 1M questions for each of the curve's
--   batches, the curve and the unmatched ids.
CREATE OR REPLACE TEMP TABLE paired_ids AS
SELECT question_id FROM facts WHERE run = 'a'
INTERSECT
SELECT question_id FROM facts WHERE run = 'b'
