-- Whether a run names the samples of its rows: a sample (or epoch) column of nulls only, as
-- pandas writes a column of None, names none, and each question then has one answer.
-- Reads: table question_metrics (one row per run, question and sample; sample '' unnamed).
-- Returns: one row, sampled BOOLEAN.
SELECT coalesce(bool_or(sample <> ''), false) AS sampled
FROM question_metrics
