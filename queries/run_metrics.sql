-- One run log's per-question scores (the map stage of ragreport metrics), in file order.
-- Reads: tables question_means and question_chars (a question's samples averaged), built with
--   only run 'a' registered.
-- Returns: question_id, slice, k, n_relevant, prompt_chars, recall, precision, hit, mrr, ndcg,
--   map, rprec, all, evidence_recall, context_precision, evidence_iou, correct, faithfulness,
--   answerable (as question_metrics and span_chars define them), in registry order; then
--   passages, evidence_in_context, prompt_sizes and unranked_samples (as question_means has
--   them: what compare pairs beside the metrics).
SELECT question_id, slice, k, n_relevant, prompt_chars, recall, precision, hit, mrr, ndcg, map,
       rprec, "all", evidence_recall, context_precision, evidence_iou, correct, faithfulness,
       answerable, passages, evidence_in_context, prompt_sizes, unranked_samples
FROM question_means
LEFT JOIN question_chars USING (run, question_id)
ORDER BY row_number
