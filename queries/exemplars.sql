-- The rows behind the diagnosis's example questions, for drill-downs (ranked candidates with the
-- evidence marked and the prompt cutoff drawn).
-- Reads: view runs.
-- Params: $ids VARCHAR[]: the question ids to show.
-- Returns: run, question_id, question, retrieved_ids, relevant_ids, relevant_grades, context_ids,
--   cited_ids, answer, reference_answer, correct, faithfulness, answer_relevance;
--   in run and file order; of a question logged with several samples, the first row.
SELECT run, question_id, question, retrieved_ids, relevant_ids, relevant_grades, context_ids,
       cited_ids, answer, reference_answer, correct, faithfulness, answer_relevance
FROM runs
WHERE list_contains($ids, question_id)
QUALIFY row_number() OVER (PARTITION BY run, question_id ORDER BY row_number) = 1
ORDER BY run, row_number
