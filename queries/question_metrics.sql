-- Per-question scores of both runs at the prompt cutoff, kept as the temp table question_metrics
-- (RunDatabase fills it a batch of questions at a time: a map over questions, whose joins and
-- groups need memory for a batch, not for the log);
-- one row per sample of a question when the runs log several (question_means.sql averages them).
-- Reads: tables facts and relevant; macros in_prompt, scored_pos, gain and answerable
--   (queries/rules.sql), and exact_sum there: same input, same bits.
-- Params: $k       INTEGER: the prompt cutoff over retrieved_ids; NULL: each question's own
--                  context_ids is the ranking and k is its length.
--         $exponential BOOLEAN: nDCG gain 2^g - 1 when true, g when false.
--         $batches, $batch INTEGER: the questions of this batch (macro in_batch).
-- Returns: run, question_id, sample, row_number, slice, k (NULL when the ranking scored, the
--   question's context_ids or with $k its retrieved_ids, is null: not logged, as against an
--   empty list), n_relevant, evidence_in_context (NULL without a prompt),
--   recall, precision, hit, mrr, ndcg, map (average precision at k, trec_eval's map_cut_k),
--   rprec (R-precision: |rel in the top min(R, k)| / R), all (1 when every relevant passage is
--   in the top k) (all NULL when the question has no relevant passage or k is NULL),
--   correct (0/1), faithfulness, context_tokens, passages (the length of context_ids, the
--   prompt the generator received, with or without $k; NULL when it is not logged),
--   answerable (as logged; else: has labelled evidence, or no labels are logged).
WITH prompt AS (
    SELECT run, question_id, sample, row_number, slice, has_context, has_labels,
           -- NULL: the ranking scored is not logged for this question (a null list, not an
           -- empty one), so its retrieval metrics are unknown, not 0
           CASE WHEN $k IS NULL THEN n_context WHEN has_retrieved THEN $k END AS k,
           CASE WHEN has_context THEN n_context END AS passages,
           has_prompt,
           correct, faithfulness, context_tokens, answerable
    FROM facts
    WHERE in_batch(question_id, $batches, $batch)
),
scored AS (
    SELECT rel.run, rel.question_id, rel.sample, rel.id, rel.n_relevant, rel.ideal_rank,
           in_prompt(p.has_context, rel.pos_context, rel.pos_retrieved, $k) AS in_prompt, p.k,
           scored_pos(rel.pos_context, rel.pos_retrieved, $k) AS pos,
           gain(rel.grade, rel.top_grade, $exponential) AS gain
    FROM relevant AS rel
    JOIN prompt AS p USING (run, question_id, sample)
    WHERE in_batch(rel.question_id, $batches, $batch)
),
ranked AS (
    -- labels found by one passage (span labels) in order of grade, the highest first: the order
    -- of the best DCG, whatever their ids; by id only to be deterministic
    SELECT *, row_number() OVER (PARTITION BY run, question_id, sample
                                 ORDER BY pos NULLS LAST, gain DESC, id)
              AS hit_no
    FROM scored
),
per_question AS (
    SELECT run, question_id, sample,
           any_value(n_relevant) AS n_relevant,
           count(*) FILTER (WHERE pos <= k) AS n_hits,
           min(pos) FILTER (WHERE pos <= k) AS first_pos,
           -- slot = max(pos, hit_no), NULL when unranked: pos itself for passage labels; with span labels one
           -- passage may cover several, which share its position while hit_no <= pos and take the
           -- next slots past it (nDCG and AP stay <= 1); a slot past k is past the cutoff in both
           coalesce(exact_sum(CASE WHEN (pos + greatest(hit_no - pos, 0)) <= k
                                   THEN gain / log2((pos + greatest(hit_no - pos, 0)) + 1) END), 0)
               AS dcg,
           exact_sum(CASE WHEN ideal_rank <= k THEN gain / log2(ideal_rank + 1) END) AS idcg,
           coalesce(exact_sum(CASE WHEN (pos + greatest(hit_no - pos, 0)) <= k
                                   THEN hit_no / (pos + greatest(hit_no - pos, 0)) END), 0)
               AS precision_sum,
           count(*) FILTER (WHERE pos <= least(k, n_relevant)) AS r_hits,
           bool_or(in_prompt) AS in_prompt
    FROM ranked
    GROUP BY run, question_id, sample
)
SELECT
    p.run,
    p.question_id,
    p.sample,
    p.row_number,
    p.slice,
    p.k,
    coalesce(q.n_relevant, 0) AS n_relevant,
    CASE WHEN p.has_prompt THEN coalesce(q.in_prompt, false) END AS evidence_in_context,
    -- scorable: labelled evidence and a logged ranking; else every retrieval metric is NULL
    CASE WHEN scorable THEN q.n_hits / q.n_relevant END AS recall,
    CASE WHEN NOT scorable THEN NULL WHEN p.k = 0 THEN 0.0 ELSE q.n_hits / p.k END AS precision,
    CASE WHEN scorable THEN (q.first_pos IS NOT NULL)::DOUBLE END AS hit,
    CASE WHEN scorable THEN coalesce(1 / q.first_pos, 0.0) END AS mrr,
    CASE WHEN NOT scorable THEN NULL WHEN coalesce(q.idcg, 0) = 0 THEN 0.0 ELSE q.dcg / q.idcg END
        AS ndcg,
    CASE WHEN scorable THEN q.precision_sum / q.n_relevant END AS map,
    CASE WHEN scorable THEN q.r_hits / q.n_relevant END AS rprec,
    CASE WHEN scorable THEN (q.n_hits = q.n_relevant)::DOUBLE END AS "all",
    p.correct::DOUBLE AS correct,
    p.faithfulness,
    p.context_tokens,
    p.passages,
    answerable(p.answerable, p.has_labels, q.n_relevant) AS answerable
FROM prompt AS p
LEFT JOIN per_question AS q USING (run, question_id, sample),
LATERAL (SELECT p.k IS NOT NULL AND q.n_relevant IS NOT NULL AS scorable)
