-- precision of span-labelled questions: the share of the top k passages that cover at least one
-- labelled span (a passage covering two labels counts once; the passage-level count of
-- question_metrics.sql would count it twice). A passage listed twice counts once, as a passage
-- id does: span_matches holds its first position only.
-- Each sample of a question is its own row of both tables.
-- Reads: tables span_matches and question_metrics, macro scored_pos (queries/rules.sql);
--   updates question_metrics.precision.
-- Params: $k INTEGER: the prompt cutoff over retrieved_ids; NULL: the prompt is the ranking.
UPDATE question_metrics AS q
SET precision = CASE WHEN q.k = 0 THEN 0.0 ELSE s.n_covering / q.k END
FROM (
    SELECT m.run, m.question_id, m.sample,
           count(DISTINCT m.pos) FILTER (WHERE m.pos <= qm.k) AS n_covering
    FROM (
        SELECT run, question_id, sample,
               scored_pos(pos_context, pos_retrieved, $k) AS pos
        FROM span_matches
    ) AS m
    JOIN question_metrics AS qm USING (run, question_id, sample)
    GROUP BY m.run, m.question_id, m.sample, qm.k
) AS s
WHERE q.run = s.run AND q.question_id = s.question_id AND q.sample = s.sample
