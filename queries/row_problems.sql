-- Every row-level input problem, counted per run, kind and column, with the first examples.
-- Reads: view runs, table facts, macro spans_apart (queries/rules.sql), the column names of views
--   raw_a and raw_b. Params: $examples INTEGER: examples kept per problem; $largest DOUBLE: the
--   largest cost value (context_tokens, latency_ms, cost_usd) taken (inputs/contract.py).
-- Returns: run, kind, column_name (as the log wrote it: context_spans, not the context_ids made
--   from them), severity ('error': the log is refused; 'left_out': the value is dropped and
--   counted in a warning), n (rows with the problem), row_numbers, question_ids,
--   details (the first $examples examples, in file order); errors first, then by run and first row.
--   kind is one of null_id (a null or blank question_id), duplicate_id, grades_length, null_in_list,
--   empty_id (an id '' in an id list), grade_range, share_range,
--   negative, not_finite, too_large (beyond $largest), span_doc, span_range, merged_spans
--   (overlapping labels, merged: not refused, listed with the values left out), ungraded (a
--   null relevant_grades beside relevant_ids: each label read as grade 1, not refused).
-- The scalar columns come from runs, the null items and bad spans of the lists from facts (which
-- reads the long lists once for every query); each row is reduced to a few numbers, once.
WITH checked AS MATERIALIZED (
    SELECT r.run, r.row_number, r.question_id, r.sample, r.faithfulness, r.answer_relevance,
           r.context_tokens, r.latency_ms, r.cost_usd,
           -- a blank id (spaces, tabs, line ends) names no question, as a null does
           trim(r.question_id, ' ' || chr(9) || chr(10) || chr(13)) = '' AS blank_id,
           len(r.relevant_grades) AS n_grades, coalesce(len(r.relevant_ids), 0) AS n_relevant,
           list_min(r.relevant_grades) AS min_grade, f.nulls_in_lists AS nulls, f.empty_ids,
           f.bad_spans
    FROM runs AS r
    JOIN facts AS f USING (run, row_number)
),
-- the first row of each question (and sample: with a sample column a question has one row per
-- sample) logged more than once; grouped rather than a window over every row (1 s of the 3 s of
-- CPU this query took at 1M questions)
repeated AS (
    SELECT run, question_id, sample, min(row_number) AS first_row
    FROM checked
    GROUP BY run, question_id, sample
    HAVING count(*) > 1
),
-- a list column's name as the user wrote it: runs.sql makes the ids and grades of a log that
-- logs none from its spans, and a problem found there is one of the spans
written AS (
    SELECT run, name,
           CASE WHEN list_contains(columns, spans) AND NOT list_contains(columns, name)
                THEN spans ELSE name END AS written
    FROM (
        SELECT right(table_name, 1) AS run, list(column_name) AS columns
        FROM information_schema.columns
        WHERE table_name IN ('raw_a', 'raw_b')
        GROUP BY table_name
    )
    CROSS JOIN (VALUES ('retrieved_ids', 'retrieved_spans'), ('relevant_ids', 'relevant_spans'),
                       ('context_ids', 'context_spans'), ('relevant_grades', 'relevant_spans'))
        AS derived(name, spans)
),
problems AS (
    SELECT run, 'null_id' AS kind, 'question_id' AS column_name, row_number, question_id,
           NULL AS detail
    FROM checked
    WHERE question_id IS NULL OR blank_id
    UNION ALL
    SELECT c.run, 'duplicate_id', 'question_id', c.row_number, c.question_id,
           -- in a log of samples a question_id repeats by design: what repeats is the pair
           CASE WHEN c.sample IS NOT NULL THEN 'sample ' || c.sample || ', ' ELSE '' END
           || 'first seen at row ' || (d.first_row + 1)
    FROM checked AS c
    JOIN repeated AS d
      ON d.run = c.run AND d.question_id = c.question_id
     AND d.sample IS NOT DISTINCT FROM c.sample  -- the rows without a sample are one group
    WHERE NOT c.blank_id AND c.row_number > d.first_row
    UNION ALL
    SELECT run, 'grades_length', 'relevant_grades', row_number, question_id,
           n_grades || ' grades for ' || n_relevant || ' relevant_ids'
    FROM checked
    WHERE n_grades <> n_relevant
    UNION ALL
    -- no grades for a row's labels in a log that grades others: read as grade 1 each, as a log
    -- without the column is, and said, since a grade 0 lost upstream would read as relevant
    SELECT run, 'ungraded', 'relevant_grades', row_number, question_id,
           n_relevant || ' relevant_ids'
    FROM checked
    WHERE n_grades IS NULL AND n_relevant > 0 AND run IN (
        SELECT right(table_name, 1) FROM information_schema.columns
        WHERE table_name IN ('raw_a', 'raw_b') AND column_name = 'relevant_grades'
    )
    UNION ALL
    SELECT run, 'null_in_list', coalesce(written, name), row_number, question_id,
           n_null || ' null(s)'
    FROM (
        SELECT run, row_number, question_id,
               unnest(['retrieved_ids', 'relevant_ids', 'context_ids', 'cited_ids',
                       'relevant_grades']) AS name,
               unnest(nulls) AS n_null
        FROM checked
        WHERE list_max(nulls) > 0
    )
    LEFT JOIN written USING (run, name)
    WHERE n_null > 0
    UNION ALL
    SELECT run, 'empty_id', name, row_number, question_id, NULL
    FROM (
        SELECT run, row_number, question_id,
               unnest(['retrieved_ids', 'relevant_ids', 'context_ids', 'cited_ids']) AS name,
               unnest(empty_ids) AS empty
        FROM checked
        WHERE list_contains(empty_ids, true)
    )
    WHERE empty
    UNION ALL
    -- grades from spans are whole numbers (inputs/load.py), read as numbers of any type
    SELECT run, 'grade_range', written, row_number, question_id, min_grade::BIGINT::VARCHAR
    FROM checked
    JOIN written USING (run)
    WHERE min_grade < 0 AND name = 'relevant_grades'
    UNION ALL
    SELECT run,
           CASE WHEN kind = 'negative' AND NOT isfinite(value) THEN 'not_finite'
                WHEN kind = 'negative' AND value > $largest THEN 'too_large' ELSE kind END,
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
        FROM checked
        WHERE NOT (coalesce(faithfulness BETWEEN 0 AND 1, true)
                   AND coalesce(answer_relevance BETWEEN 0 AND 1, true)
                   AND coalesce(context_tokens BETWEEN 0 AND $largest, true)
                   AND coalesce(latency_ms BETWEEN 0 AND $largest, true)
                   AND coalesce(cost_usd BETWEEN 0 AND $largest, true))
    )
    WHERE isnan(value) OR isinf(value) OR value < 0 OR (kind = 'share_range' AND value > 1)
       OR (kind = 'negative' AND value > $largest)
    UNION ALL
    -- the first bad span of each span list: no document, a negative offset or start >= end
    SELECT run, CASE WHEN coalesce(s.doc_id, '') = '' THEN 'span_doc' ELSE 'span_range' END,
           name, row_number, question_id,
           CASE WHEN s.doc_id = '' THEN '""' ELSE coalesce(s.doc_id, 'NULL') END
           || ' [' || coalesce(s.start::VARCHAR, 'NULL') || ', '
           || coalesce(s."end"::VARCHAR, 'NULL') || ')'
    FROM (
        SELECT run, row_number, question_id,
               unnest(['relevant_spans', 'retrieved_spans', 'context_spans']) AS name,
               unnest(bad_spans) AS s
        FROM checked
        WHERE list_count(bad_spans) > 0
    )
    WHERE s IS NOT NULL
    UNION ALL
    -- labels of one question that overlap: merged into one label before measuring; the labels
    -- merged are those of grade > 0 (span_matches.sql), so a grade-0 label overlaps nothing
    SELECT run, 'merged_spans', 'relevant_spans', row_number, any_value(question_id),
           count(*) || ' span(s) overlapping an earlier one'
    FROM (
        SELECT run, row_number, question_id,
               s.start < max(s."end") OVER (
                   PARTITION BY run, row_number, s.doc_id ORDER BY s.start, s."end"
                   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
               ) AS overlapping
        FROM (SELECT run, row_number, question_id, unnest(sorted) AS s
              FROM (SELECT run, row_number, question_id,
                           list_sort(list_filter(relevant_spans,
                                                 lambda s: coalesce(s.grade, 1) > 0)) AS sorted
                    FROM runs WHERE len(relevant_spans) > 1)
              WHERE NOT spans_apart(sorted))
    )
    WHERE overlapping
    GROUP BY run, row_number
    -- a question's samples share its labels: its first row stands for them
    QUALIFY row_number = min(row_number) OVER (PARTITION BY run, any_value(question_id))
)
SELECT run, kind, column_name,
       CASE WHEN kind IN ('not_finite', 'merged_spans', 'ungraded') THEN 'left_out'
            ELSE 'error' END
           AS severity,
       count(*) AS n,
       list(row_number ORDER BY row_number)[1:$examples] AS row_numbers,
       list(question_id ORDER BY row_number)[1:$examples] AS question_ids,
       list(detail ORDER BY row_number)[1:$examples] AS details
FROM problems
GROUP BY run, kind, column_name
ORDER BY severity, run, min(row_number), kind, column_name
