-- Samples of one question whose labels disagree: a question is labelled once, whichever answer
-- is scored, so a disagreement means the rows are not samples of one question. And rows whose
-- sample is null or blank in a log whose other rows name theirs: such a row would be read as a
-- sample named '', beside the question's named ones.
-- Reads: table facts, view runs (relevant_spans), the column names of views raw_a and raw_b.
--   Params: $examples INTEGER: examples kept per problem.
-- Only runs that log a sample column are checked (without one a repeated question_id is a
-- duplicate_id of row_problems.sql). Each row is compared with its question's first row;
-- relevant labels compare as sets of (passage, grade), and no labels (NULL) differ from an
-- empty set (an unanswerable question).
-- Returns: the columns of row_problems.sql; kind 'sample_labels', one row per column that
--   disagrees (relevant_ids, or relevant_spans for a question whose labels are logged as spans,
--   even where one of its rows has none; answerable, slice, question), details 'row N has ...';
--   kind 'null_sample' in the column as the log names it (sample or epoch).
WITH labelled AS (
    SELECT run, row_number, question_id, sample, answerable::VARCHAR AS answerable, slice,
           question,
           CASE WHEN bool_or(r.relevant_spans IS NOT NULL) OVER (PARTITION BY run, question_id)
                THEN 'relevant_spans' ELSE 'relevant_ids' END AS labels_column,
           list_sort(list_transform(
               relevant_ids, lambda id, i: id || ':' || relevant_grades[i]::VARCHAR
           ))::VARCHAR AS labels,
           trim(sample, ' ' || chr(9) || chr(10) || chr(13)) = '' AS unnamed,
           NOT bool_and(unnamed) OVER (PARTITION BY run) AS sampled,
           min(row_number) OVER (PARTITION BY run, question_id) AS first_row
    FROM facts
    JOIN (SELECT run, row_number, relevant_spans FROM runs) AS r USING (run, row_number)
),
compared AS (
    SELECT r.run, r.row_number, r.question_id, f.row_number AS first_row,
           unnest([r.labels_column, 'answerable', 'slice', 'question']) AS column_name,
           unnest([r.labels, r.answerable, r.slice, r.question]) AS value,
           unnest([f.labels, f.answerable, f.slice, f.question]) AS first_value
    FROM labelled AS r
    JOIN labelled AS f ON f.run = r.run AND f.row_number = r.first_row
    WHERE r.sampled AND r.row_number > r.first_row
),
problems AS (
    SELECT run, 'sample_labels' AS kind, column_name, row_number, question_id,
           'row ' || (first_row + 1) || ' has ' || coalesce(first_value, 'null') || ', this row '
               || coalesce(value, 'null') AS detail
    FROM compared
    WHERE value IS DISTINCT FROM first_value
    UNION ALL
    SELECT run, 'null_sample',
           CASE WHEN list_contains(columns, 'sample') THEN 'sample' ELSE 'epoch' END,
           row_number, question_id, NULL
    FROM labelled
    JOIN (
        SELECT right(table_name, 1) AS run, list(column_name) AS columns
        FROM information_schema.columns
        WHERE table_name IN ('raw_a', 'raw_b')
        GROUP BY table_name
    ) USING (run)
    WHERE sampled AND unnamed
)
SELECT run, kind, column_name, 'error' AS severity, count(*) AS n,
       list(row_number ORDER BY row_number)[1:$examples] AS row_numbers,
       list(question_id ORDER BY row_number)[1:$examples] AS question_ids,
       list(detail ORDER BY row_number)[1:$examples] AS details
FROM problems
GROUP BY run, kind, column_name
ORDER BY run, min(row_number), column_name
