-- The paired questions: one row per question_id present in both runs, A's and B's scores side by side.
-- Reads: tables question_means (queries/question_means.sql) and question_chars
--   (queries/question_chars.sql), one row per run and question (the character measures NULL
--   for questions without span labels).
-- Returns: question_id, slice (A's, else B's), then <column>_a and <column>_b for
--   k, passages, n_relevant, answerable, context_tokens, evidence_in_context, recall, precision, hit, mrr, ndcg, map, rprec,
--   all, correct,
--   faithfulness, evidence_recall, context_precision, evidence_iou, prompt_chars, prompt_sizes,
--   unranked_samples (NULL for a question of one sample); by question_id,
--   so that the bootstrap's draws, and every number, do not depend on the logs' row order (a log
--   re-exported or re-sharded in another order gives the same report).
SELECT
    a.question_id,
    coalesce(a.slice, b.slice) AS slice,
    a.k AS k_a, b.k AS k_b,
    a.passages AS passages_a, b.passages AS passages_b,
    a.n_relevant AS n_relevant_a, b.n_relevant AS n_relevant_b,
    a.answerable AS answerable_a, b.answerable AS answerable_b,
    a.context_tokens AS context_tokens_a, b.context_tokens AS context_tokens_b,
    a.evidence_in_context AS evidence_in_context_a, b.evidence_in_context AS evidence_in_context_b,
    a.recall AS recall_a, b.recall AS recall_b,
    a.precision AS precision_a, b.precision AS precision_b,
    a.hit AS hit_a, b.hit AS hit_b,
    a.mrr AS mrr_a, b.mrr AS mrr_b,
    a.ndcg AS ndcg_a, b.ndcg AS ndcg_b,
    a.map AS map_a, b.map AS map_b,
    a.rprec AS rprec_a, b.rprec AS rprec_b,
    a."all" AS all_a, b."all" AS all_b,
    a.correct AS correct_a, b.correct AS correct_b,
    a.faithfulness AS faithfulness_a, b.faithfulness AS faithfulness_b,
    ca.evidence_recall AS evidence_recall_a, cb.evidence_recall AS evidence_recall_b,
    ca.context_precision AS context_precision_a, cb.context_precision AS context_precision_b,
    ca.evidence_iou AS evidence_iou_a, cb.evidence_iou AS evidence_iou_b,
    ca.prompt_chars AS prompt_chars_a, cb.prompt_chars AS prompt_chars_b,
    a.prompt_sizes AS prompt_sizes_a, b.prompt_sizes AS prompt_sizes_b,
    a.unranked_samples AS unranked_samples_a, b.unranked_samples AS unranked_samples_b
FROM question_means AS a
JOIN question_means AS b ON a.question_id = b.question_id AND b.run = 'b'
LEFT JOIN question_chars AS ca ON ca.run = 'a' AND ca.question_id = a.question_id
LEFT JOIN question_chars AS cb ON cb.run = 'b' AND cb.question_id = b.question_id
WHERE a.run = 'a'
ORDER BY a.question_id
