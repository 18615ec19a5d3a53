-- The rows behind the diagnosis's example questions, for drill-downs (ranked candidates with the
-- evidence marked and the prompt cutoff drawn).
-- Reads: view runs.
-- Params: $ids VARCHAR[]: the question ids to show.
-- Returns: run, question_id, question, retrieved_ids, relevant_ids, relevant_grades, context_ids,
--   cited_ids, answer, reference_answer, correct, faithfulness, answer_relevance;
--   in run and file order.
SELECT run, question_id, question, retrieved_ids, relevant_ids, relevant_grades, context_ids,
       cited_ids, answer, reference_answer, correct, faithfulness, answer_relevance
FROM runs
WHERE list_contains($ids, question_id)
ORDER BY run, row_number
