-- Every row-level input problem, counted per run, kind and column, with the first examples.
-- Reads: view runs. Params: $examples INTEGER: examples kept per problem.
-- Returns: run, kind, column_name, severity ('error': the log is refused; 'left_out': the value
--   is dropped and counted in a warning), n (rows with the problem), row_numbers, question_ids,
--   details (the first $examples examples, in file order); errors first, then by run and first row.
--   kind is one of null_id, duplicate_id, grades_length, null_in_list, grade_range, share_range,
--   negative, not_finite.
WITH problems AS (
    SELECT run, 'null_id' AS kind, 'question_id' AS column_name, row_number, question_id,
           NULL AS detail
    FROM runs
    WHERE question_id IS NULL
    UNION ALL
    SELECT run, 'duplicate_id', 'question_id', row_number, question_id,
           'first seen at row ' || (first_row + 1)
    FROM (
        SELECT run, row_number, question_id,
               min(row_number) OVER (PARTITION BY run, question_id) AS first_row
        FROM runs
        WHERE question_id IS NOT NULL
    )
    WHERE row_number > first_row
    UNION ALL
    SELECT run, 'grades_length', 'relevant_grades', row_number, question_id,
           len(relevant_grades) || ' grades for ' || coalesce(len(relevant_ids), 0) || ' relevant_ids'
    FROM runs
    WHERE relevant_grades IS NOT NULL
      AND len(relevant_grades) <> coalesce(len(relevant_ids), 0)
    UNION ALL
    SELECT run, 'null_in_list', name, row_number, question_id,
           (len(ids) - list_count(ids)) || ' null(s) among ' || len(ids)
    FROM (
        SELECT run, row_number, question_id,
               unnest([
                   {'name': 'retrieved_ids', 'ids': retrieved_ids},
                   {'name': 'relevant_ids', 'ids': relevant_ids},
                   {'name': 'context_ids', 'ids': context_ids},
                   {'name': 'cited_ids', 'ids': cited_ids}
               ], recursive := true)
        FROM runs
    )
    WHERE list_count(ids) < len(ids)
    UNION ALL
    SELECT run, 'null_in_list', 'relevant_grades', row_number, question_id,
           (len(relevant_grades) - list_count(relevant_grades)) || ' null(s) among '
               || len(relevant_grades)
    FROM runs
    WHERE list_count(relevant_grades) < len(relevant_grades)
    UNION ALL
    SELECT run, 'grade_range', 'relevant_grades', row_number, question_id,
           list_min(relevant_grades)::VARCHAR
    FROM runs
    WHERE list_min(relevant_grades) < 0
    UNION ALL
    SELECT run,
           CASE WHEN kind = 'negative' AND NOT isfinite(value) THEN 'not_finite' ELSE kind END,
           name, row_number, question_id, value::VARCHAR
    FROM (
        SELECT run, row_number, question_id,
               unnest([
                   {'kind': 'share_range', 'name': 'faithfulness', 'value': faithfulness},
                   {'kind': 'share_range', 'name': 'answer_relevance', 'value': answer_relevance},
                   {'kind': 'negative', 'name': 'context_tokens', 'value': context_tokens},
                   {'kind': 'negative', 'name': 'latency_ms', 'value': latency_ms},
                   {'kind': 'negative', 'name': 'cost_usd', 'value': cost_usd}
               ], recursive := true)
        FROM runs
    )
    WHERE isnan(value) OR isinf(value) OR value < 0 OR (kind = 'share_range' AND value > 1)
)
SELECT run, kind, column_name,
       CASE WHEN kind = 'not_finite' THEN 'left_out' ELSE 'error' END AS severity,
       count(*) AS n,
       list(row_number ORDER BY row_number)[1:$examples] AS row_numbers,
       list(question_id ORDER BY row_number)[1:$examples] AS question_ids,
       list(detail ORDER BY row_number)[1:$examples] AS details
FROM problems
GROUP BY run, kind, column_name
ORDER BY severity, run, min(row_number), kind, column_name
