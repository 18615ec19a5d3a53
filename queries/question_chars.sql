-- One row per run and question with a span prompt or span labels: the mean over the question's
-- samples of the character measures of span_chars, as question_means.sql averages the other
-- scores.
-- Reads: table span_chars (queries/span_chars.sql, one row per sample; empty without span labels).
-- Returns (temp table question_chars): run, question_id, evidence_recall, context_precision,
--   evidence_iou, prompt_chars.
CREATE OR REPLACE TEMP TABLE question_chars AS
SELECT run, question_id,
       avg(evidence_recall ORDER BY sample) AS evidence_recall,
       avg(context_precision ORDER BY sample) AS context_precision,
       avg(evidence_iou ORDER BY sample) AS evidence_iou,
       avg(prompt_chars ORDER BY sample) AS prompt_chars
FROM span_chars
GROUP BY run, question_id
