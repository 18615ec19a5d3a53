-- Both run logs as one view in the run-log contract's types.
-- Reads: views rows_a and rows_b (each run's contract columns and row_number, the 0-based row in
--   its file, registered from Python; other columns of the logs never reach this view).
-- Absent optional columns come back NULL: the UNION ALL BY NAME with an empty, typed row adds them.
-- Returns: run ('a' | 'b'), row_number (0-based row in its file) and every contract column
--   (epoch, another name of sample, as sample; a NaN faithfulness or answer_relevance as NULL);
--   a log of spans gets its id lists from them
--   (each span named doc_id:start-end), and retrieved_ids_logged (NULL where the ids come from
--   retrieved_spans).
CREATE OR REPLACE TEMP VIEW runs AS
WITH unioned AS (
    SELECT 'a' AS run, * FROM rows_a
    UNION ALL BY NAME
    SELECT 'b' AS run, * FROM rows_b
    UNION ALL BY NAME
    SELECT *
    FROM (
        SELECT
            NULL::VARCHAR AS run,
            NULL::BIGINT AS row_number,
            NULL::VARCHAR AS question_id,
            NULL::VARCHAR AS question,
            NULL AS slice,  -- typed by the logs: slice_value reads their own type
            NULL::VARCHAR[] AS retrieved_ids,
            NULL::VARCHAR[] AS relevant_ids,
            NULL::BIGINT[] AS relevant_grades,
            NULL::VARCHAR[] AS context_ids,
            NULL::BOOLEAN AS correct,
            NULL::DOUBLE AS faithfulness,
            NULL::VARCHAR AS answer,
            NULL::VARCHAR AS reference_answer,
            NULL::DOUBLE AS answer_relevance,
            NULL::BOOLEAN AS answerable,
            NULL::BOOLEAN AS abstained,
            NULL::VARCHAR[] AS cited_ids,
            NULL::BOOLEAN AS human_correct,
            NULL::BOOLEAN AS human_faithful,
            NULL::DOUBLE AS context_tokens,
            NULL::DOUBLE AS latency_ms,
            NULL::DOUBLE AS cost_usd,
            NULL::VARCHAR AS source_id,
            NULL::STRUCT(doc_id VARCHAR, start BIGINT, "end" BIGINT, grade BIGINT)[] AS relevant_spans,
            NULL::STRUCT(doc_id VARCHAR, start BIGINT, "end" BIGINT)[] AS retrieved_spans,
            NULL::STRUCT(doc_id VARCHAR, start BIGINT, "end" BIGINT)[] AS context_spans,
            NULL::VARCHAR AS sample,
            NULL::VARCHAR AS epoch
    )
    WHERE false
)
SELECT
    run,
    row_number,
    question_id::VARCHAR AS question_id,
    question::VARCHAR AS question,
    slice_value(slice) AS slice,  -- as every --slice column is read: 2026-01-02, true, 3
    -- span logs: each span named doc_id:start-end where its run logs no passage ids (span_names,
    -- queries/rules.sql); retrieved_ids_logged is the ranking as logged, so facts.sql names only
    -- the part of a ranking of spans it needs
    coalesce(retrieved_ids::VARCHAR[], span_names(retrieved_spans)) AS retrieved_ids,
    retrieved_ids::VARCHAR[] AS retrieved_ids_logged,
    coalesce(relevant_ids::VARCHAR[], span_names(relevant_spans)) AS relevant_ids,
    -- a span's grade goes with the span's name, never with a passage id logged beside it
    CASE WHEN relevant_ids IS NULL
         THEN coalesce(relevant_grades::BIGINT[],
                       list_transform(relevant_spans, lambda s: coalesce(s.grade, 1)))
         ELSE relevant_grades::BIGINT[] END AS relevant_grades,
    coalesce(context_ids::VARCHAR[], span_names(context_spans)) AS context_ids,
    correct::BOOLEAN AS correct,
    -- a NaN share is a judge that failed (polars and json.dumps write it so): no value, as the
    -- null pandas writes for it; inf is a value outside 0..1, refused by row_problems
    CASE WHEN NOT isnan(faithfulness::DOUBLE) THEN faithfulness::DOUBLE END AS faithfulness,
    answer::VARCHAR AS answer,
    reference_answer::VARCHAR AS reference_answer,
    CASE WHEN NOT isnan(answer_relevance::DOUBLE) THEN answer_relevance::DOUBLE END
        AS answer_relevance,
    answerable::BOOLEAN AS answerable,
    abstained::BOOLEAN AS abstained,
    cited_ids::VARCHAR[] AS cited_ids,
    human_correct::BOOLEAN AS human_correct,
    human_faithful::BOOLEAN AS human_faithful,
    context_tokens::DOUBLE AS context_tokens,
    latency_ms::DOUBLE AS latency_ms,
    cost_usd::DOUBLE AS cost_usd,
    source_id::VARCHAR AS source_id,
    relevant_spans::STRUCT(doc_id VARCHAR, start BIGINT, "end" BIGINT, grade BIGINT)[] AS relevant_spans,
    retrieved_spans::STRUCT(doc_id VARCHAR, start BIGINT, "end" BIGINT)[] AS retrieved_spans,
    context_spans::STRUCT(doc_id VARCHAR, start BIGINT, "end" BIGINT)[] AS context_spans,
    coalesce(sample::VARCHAR, epoch::VARCHAR) AS sample
FROM unioned
