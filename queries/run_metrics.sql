-- One run log's per-question scores (the map stage of ragreport metrics), in file order.
-- Reads: temp table question_means (a question's samples averaged), built with only run 'a'
--   registered.
-- Returns: question_id, slice, k, n_relevant, recall, precision, hit, mrr, ndcg, map, rprec,
--   all, correct, faithfulness, answerable (as question_metrics defines them).
SELECT question_id, slice, k, n_relevant, recall, precision, hit, mrr, ndcg, map, rprec, "all",
       correct, faithfulness, answerable
FROM question_means
ORDER BY row_number
