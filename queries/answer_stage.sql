-- Per-question outcome of each link of the chain: candidates, prompt, answer, citations, cost.
-- Reads: tables facts and relevant; macros in_prompt and answerable (queries/rules.sql).
-- Params: $k INTEGER: the prompt cutoff over retrieved_ids; NULL: context_ids is the prompt.
-- Returns: run, question_id, row_number, slice, n_relevant,
--   has_prompt (the run logs what reached the prompt: context_ids, or retrieved_ids with $k),
--   depth (passages in retrieved_ids; NULL without it),
--   prompt_is_scored (the prompt is the list the retrieval metrics score at the cutoff, so hit@k
--     measures it; false when context_ids is the prompt and $k cuts retrieved_ids),
--   answerable (as logged; else has labelled evidence; true when no relevant_ids is logged, since
--     only an empty list marks a question unanswerable),
--   answerable_known (answerable is logged, or the question's relevant_ids is: else answerable
--     is the assumption above, which the abstention stage does not score),
--   abstained (NULL as false; NULL throughout a run that does not log it),
--   evidence_in_context, evidence_in_candidates (a labelled passage in the prompt / anywhere in
--     retrieved_ids; NULL without labelled evidence or without the list to look in),
--   best_evidence_in_context, best_evidence_in_candidates (a passage of the question's highest
--     labelled grade in the prompt / anywhere in retrieved_ids; NULL as the two above),
--   evidence_ranked_for_prompt (a labelled passage within the first n of retrieved_ids, n the
--     length of the logged context_ids, at least 1: a prompt of that size cut from the ranking
--     holds it, and an empty prompt left out what the ranking put first; NULL without labelled
--     evidence, retrieved_ids or context_ids),
--   correct, faithfulness, answer_relevance,
--   n_cited (distinct cited ids), n_cited_in_context, n_cited_relevant (labelled, grade > 0),
--   n_cited_used (in the context and relevant), human_correct, human_faithful,
--   context_tokens, latency_ms, cost_usd.
WITH evidence AS (
    SELECT rel.run, rel.question_id,
           any_value(rel.n_relevant) AS n_relevant,
           bool_or(in_prompt(f.has_context, rel.pos_context, rel.pos_retrieved, $k)) AS in_prompt,
           bool_or(in_prompt(f.has_context, rel.pos_context, rel.pos_retrieved, $k)
                   AND rel.grade = rel.top_grade) AS best_in_prompt,
           bool_or(rel.pos_retrieved IS NOT NULL) AS in_candidates,
           bool_or(rel.pos_retrieved IS NOT NULL AND rel.grade = rel.top_grade)
               AS best_in_candidates,
           bool_or(coalesce(rel.pos_retrieved <= greatest(f.n_context, 1), false))
               AS ranked_for_prompt
    FROM relevant AS rel
    JOIN facts AS f USING (run, question_id)
    GROUP BY rel.run, rel.question_id
),
cited AS (
    SELECT run, question_id, unnest(cited) AS id, unnest(cited_in_prompt) AS in_prompt
    FROM facts
),
citations AS (
    SELECT c.run, c.question_id,
           count(*) AS n_cited,
           count(*) FILTER (WHERE c.in_prompt) AS n_cited_in_context,
           count(rel.id) AS n_cited_relevant,
           count(rel.id) FILTER (WHERE c.in_prompt) AS n_cited_used
    FROM cited AS c
    LEFT JOIN relevant AS rel USING (run, question_id, id)
    GROUP BY c.run, c.question_id
)
SELECT
    f.run,
    f.question_id,
    f.row_number,
    f.slice,
    coalesce(e.n_relevant, 0) AS n_relevant,
    f.has_prompt,
    f.depth,
    NOT (f.has_context AND $k IS NOT NULL) AS prompt_is_scored,
    answerable(f.answerable, f.has_labels, e.n_relevant) AS answerable,
    f.answerable IS NOT NULL OR f.has_labels AS answerable_known,
    -- the runs that log abstained, looked up: a window over each run's rows kept them all
    -- (1.6 s of 2.6 at 1M questions)
    CASE WHEN f.run IN (SELECT DISTINCT run FROM facts WHERE abstained IS NOT NULL)
         THEN coalesce(f.abstained, false) END AS abstained,
    CASE WHEN f.has_prompt THEN e.in_prompt END AS evidence_in_context,
    CASE WHEN f.has_prompt THEN e.best_in_prompt END AS best_evidence_in_context,
    CASE WHEN f.has_retrieved THEN e.in_candidates END AS evidence_in_candidates,
    CASE WHEN f.has_retrieved THEN e.best_in_candidates END AS best_evidence_in_candidates,
    CASE WHEN f.has_retrieved AND f.has_context THEN e.ranked_for_prompt END
        AS evidence_ranked_for_prompt,
    f.correct,
    f.faithfulness,
    f.answer_relevance,
    CASE WHEN f.cited IS NOT NULL THEN coalesce(c.n_cited, 0) END AS n_cited,
    CASE WHEN f.cited IS NOT NULL AND f.has_prompt
         THEN coalesce(c.n_cited_in_context, 0) END AS n_cited_in_context,
    CASE WHEN f.cited IS NOT NULL AND f.has_labels
         THEN coalesce(c.n_cited_relevant, 0) END AS n_cited_relevant,
    CASE WHEN f.cited IS NOT NULL AND f.has_labels AND f.has_prompt
         THEN coalesce(c.n_cited_used, 0) END AS n_cited_used,
    f.human_correct,
    f.human_faithful,
    f.context_tokens,
    f.latency_ms,
    f.cost_usd
FROM facts AS f
LEFT JOIN evidence AS e USING (run, question_id)
LEFT JOIN citations AS c USING (run, question_id)
