-- Per-question outcome of each link of the chain: candidates, prompt, answer, citations, cost.
-- Reads: view runs, table relevant.
-- Params: $k INTEGER: the prompt cutoff over retrieved_ids; NULL: context_ids is the prompt.
--   "In context" reads context_ids whenever it is logged, else the first $k retrieved_ids.
-- Returns: run, question_id, row_number, slice, n_relevant,
--   answerable (as logged; else has labelled evidence; true when no relevant_ids is logged, since
--     only an empty list marks a question unanswerable),
--   abstained (NULL as false; NULL throughout a run that does not log it),
--   evidence_in_context, evidence_in_candidates (a labelled passage in the prompt / anywhere in
--     retrieved_ids; NULL without labelled evidence or without the list to look in),
--   correct, faithfulness, answer_relevance,
--   n_cited (distinct cited ids), n_cited_in_context, n_cited_relevant (labelled, grade > 0),
--   n_cited_used (in the context and relevant), human_correct, human_faithful,
--   context_tokens, latency_ms, cost_usd; in run and file order.
WITH prompt AS (
    SELECT run, question_id,
           CASE WHEN context_ids IS NOT NULL THEN context_ids
                WHEN $k IS NOT NULL THEN retrieved_ids[1:$k] END AS prompt_ids
    FROM runs
),
evidence AS (
    SELECT rel.run, rel.question_id,
           any_value(rel.n_relevant) AS n_relevant,
           bool_or(list_contains(p.prompt_ids, rel.id)) AS in_prompt,
           bool_or(rel.pos_retrieved IS NOT NULL) AS in_candidates
    FROM relevant AS rel
    JOIN prompt AS p USING (run, question_id)
    GROUP BY rel.run, rel.question_id
),
cited AS (
    SELECT DISTINCT run, question_id, unnest(cited_ids) AS id FROM runs
),
citations AS (
    SELECT c.run, c.question_id,
           count(*) AS n_cited,
           count(*) FILTER (WHERE list_contains(p.prompt_ids, c.id)) AS n_cited_in_context,
           count(rel.id) AS n_cited_relevant,
           count(rel.id) FILTER (WHERE list_contains(p.prompt_ids, c.id)) AS n_cited_used
    FROM cited AS c
    JOIN prompt AS p USING (run, question_id)
    LEFT JOIN relevant AS rel USING (run, question_id, id)
    GROUP BY c.run, c.question_id
)
SELECT
    r.run,
    r.question_id,
    r.row_number,
    r.slice,
    coalesce(e.n_relevant, 0) AS n_relevant,
    coalesce(r.answerable, r.relevant_ids IS NULL OR e.n_relevant IS NOT NULL) AS answerable,
    CASE WHEN count(r.abstained) OVER (PARTITION BY r.run) > 0
         THEN coalesce(r.abstained, false) END AS abstained,
    CASE WHEN p.prompt_ids IS NOT NULL THEN e.in_prompt END AS evidence_in_context,
    CASE WHEN r.retrieved_ids IS NOT NULL THEN e.in_candidates END AS evidence_in_candidates,
    r.correct,
    r.faithfulness,
    r.answer_relevance,
    CASE WHEN r.cited_ids IS NOT NULL THEN coalesce(c.n_cited, 0) END AS n_cited,
    CASE WHEN r.cited_ids IS NOT NULL AND p.prompt_ids IS NOT NULL
         THEN coalesce(c.n_cited_in_context, 0) END AS n_cited_in_context,
    CASE WHEN r.cited_ids IS NOT NULL AND r.relevant_ids IS NOT NULL
         THEN coalesce(c.n_cited_relevant, 0) END AS n_cited_relevant,
    CASE WHEN r.cited_ids IS NOT NULL AND r.relevant_ids IS NOT NULL AND p.prompt_ids IS NOT NULL
         THEN coalesce(c.n_cited_used, 0) END AS n_cited_used,
    r.human_correct,
    r.human_faithful,
    r.context_tokens,
    r.latency_ms,
    r.cost_usd
FROM runs AS r
JOIN prompt AS p USING (run, question_id)
LEFT JOIN evidence AS e USING (run, question_id)
LEFT JOIN citations AS c USING (run, question_id)
ORDER BY r.run, r.row_number
