-- Whether some question of a run has more than one sample, so that its scores are means over
-- samples (a 0/1 score a share). A sample (or epoch) column that names one sample a question, as
-- inspect-ai writes epoch 1 for a single epoch, or one of nulls only, averages nothing: the runs
-- are scored as without it.
-- Reads: table question_means (samples: the rows averaged).
-- Returns: one row, sampled BOOLEAN.
SELECT coalesce(max(samples) > 1, false) AS sampled
FROM question_means
