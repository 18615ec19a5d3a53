-- One row per run and question: the run log's scalar columns and labels, and all that the other
-- queries need from the passage lists, so the long lists are read from the Parquet files once.
-- Reads: view runs; macro prompt_ids (queries/rules.sql: the prompt is context_ids whenever it
--   is logged, else the first $k of retrieved_ids).
-- Params: $k INTEGER: the prompt cutoff over retrieved_ids; NULL: context_ids is the prompt.
-- Returns (table facts, made by RunDatabase: KEPT): run, row_number, question_id, sample (''
--   when not logged), question, slice, correct,
--   faithfulness, answer_relevance, answerable (as logged), abstained, human_correct,
--   human_faithful, context_tokens, latency_ms, cost_usd (NULL where not finite), has_labels, relevant_ids,
--   relevant_grades (1 where absent), has_retrieved, depth, has_context, n_context, has_prompt,
--   repeated_in_prompt (a passage id twice in the prompt, or one span under two ids, as a
--     passage table may name a passage; the rest of a ranking is not checked: a repeat there
--     wastes no prompt slot, and distinct-counting every list would dominate the run time of
--     large logs),
--   pos_retrieved, pos_context (aligned with relevant_ids: first 1-based position, NULL if absent),
--   n_judged_top (passages of the top k, the first $k of retrieved_ids or else context_ids, that
--     carry a label of any grade: judged, for unjudged.sql),
--   cited (distinct cited ids, NULL when not logged), cited_in_prompt (aligned with cited),
--   nulls_in_lists (null items in retrieved_ids, relevant_ids, context_ids, cited_ids and
--     relevant_grades as logged), empty_ids (whether retrieved_ids, relevant_ids, context_ids
--     and cited_ids as logged hold an empty id ''), bad_spans (macro bad_span of relevant_spans, retrieved_spans
--     and context_spans; NULL for a row without spans).
SELECT
    run, row_number, question_id, coalesce(sample, '') AS sample, question, slice, correct, faithfulness, answer_relevance,
    answerable, abstained, human_correct, human_faithful,
    -- inf or NaN (a timeout logged as inf) is no measurement: left out, counted by row_problems
    CASE WHEN isfinite(context_tokens) THEN context_tokens END AS context_tokens,
    CASE WHEN isfinite(latency_ms) THEN latency_ms END AS latency_ms,
    CASE WHEN isfinite(cost_usd) THEN cost_usd END AS cost_usd,
    relevant_ids IS NOT NULL AS has_labels,
    relevant_ids,
    coalesce(relevant_grades, list_transform(relevant_ids, lambda x: 1)) AS relevant_grades,
    retrieved_ids_logged IS NOT NULL OR retrieved_spans IS NOT NULL AS has_retrieved,
    coalesce(len(retrieved_ids_logged), len(retrieved_spans)) AS depth,
    context_ids IS NOT NULL AS has_context,
    len(context_ids) AS n_context,
    prompt IS NOT NULL AS has_prompt,
    len(list_distinct(prompt)) < len(prompt)
        OR coalesce(len(list_distinct(prompt_spans)) < len(prompt_spans), false)
        AS repeated_in_prompt,
    -- a question labelled with spans is found through span_matches.sql, not by its spans' names
    CASE WHEN coalesce(len(relevant_spans), 0) = 0 THEN list_transform(
        relevant_ids,
        lambda id: list_position(coalesce(retrieved_ids_logged, span_names(retrieved_spans)), id)
    ) END AS pos_retrieved,
    list_transform(relevant_ids, lambda id: list_position(context_ids, id)) AS pos_context,
    len(list_filter(CASE WHEN $k IS NULL THEN context_ids ELSE top_k END,
                    lambda id: list_contains(relevant_ids, id))) AS n_judged_top,
    -- null ids inside each list, counted here where the lists are read anyway (row_problems.sql)
    [coalesce(len(retrieved_ids_logged) - list_count(retrieved_ids_logged),
              len(retrieved_spans) - list_count(retrieved_spans)),
     len(relevant_ids) - list_count(relevant_ids),
     len(context_ids) - list_count(context_ids), len(cited_ids) - list_count(cited_ids),
     len(relevant_grades) - list_count(relevant_grades)] AS nulls_in_lists,
    -- an empty id names no passage, and two of them would match as evidence; a native
    -- list_contains, not a trim: a lambda over every id of a ranking costs ten times as much,
    -- so an id of spaces is a name
    [list_contains(retrieved_ids_logged, ''), list_contains(relevant_ids, ''),
     list_contains(context_ids, ''), list_contains(cited_ids, '')] AS empty_ids,
    -- the first bad span of relevant_spans, retrieved_spans and context_spans, likewise
    CASE WHEN relevant_spans IS NOT NULL OR retrieved_spans IS NOT NULL
              OR context_spans IS NOT NULL THEN
        [bad_span(relevant_spans), bad_span(retrieved_spans), bad_span(context_spans)]
    END AS bad_spans,
    list_distinct(cited_ids) AS cited,
    list_transform(
        list_distinct(cited_ids),
        lambda c: list_contains(prompt, c)
    ) AS cited_in_prompt
FROM (
    SELECT *, prompt_ids(context_ids, top_k, $k) AS prompt,
           prompt_ids(context_spans, retrieved_spans, $k) AS prompt_spans
    FROM (
        -- the first $k of the ranking, named from its spans if need be: naming every passage
        -- of a ranking of spans would cost more than all the rest of this query; none without
        -- $k, where slicing every ranking to [1:NULL] cost 1.1 s of CPU at 1M questions
        SELECT *, CASE WHEN $k IS NOT NULL THEN
                      coalesce(retrieved_ids_logged[1:$k], span_names(retrieved_spans[1:$k]))
                  END AS top_k
        FROM runs
    )
)
