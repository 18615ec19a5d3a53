-- Row-level input problems, at most one example per run and kind, in file order.
-- Reads: view runs.
-- Returns: run, kind, row_number, question_id, detail; kind is one of
--   null_id, duplicate_id, grades_length, faithfulness_range.
WITH problems AS (
    SELECT run, 'null_id' AS kind, row_number, question_id, NULL AS detail
    FROM runs
    WHERE question_id IS NULL
    UNION ALL
    SELECT run, 'duplicate_id', row_number, question_id,
           'first seen at row ' || first_row
    FROM (
        SELECT run, row_number, question_id,
               min(row_number) OVER (PARTITION BY run, question_id) AS first_row
        FROM runs
        WHERE question_id IS NOT NULL
    )
    WHERE row_number > first_row
    UNION ALL
    SELECT run, 'grades_length', row_number, question_id,
           len(relevant_grades) || ' grades for ' || coalesce(len(relevant_ids), 0) || ' relevant_ids'
    FROM runs
    WHERE relevant_grades IS NOT NULL
      AND len(relevant_grades) <> coalesce(len(relevant_ids), 0)
    UNION ALL
    SELECT run, 'faithfulness_range', row_number, question_id, faithfulness::VARCHAR
    FROM runs
    WHERE faithfulness < 0 OR faithfulness > 1 OR isnan(faithfulness)
)
SELECT run, kind, row_number, question_id, detail
FROM problems
QUALIFY row_number() OVER (PARTITION BY run, kind ORDER BY row_number) = 1
ORDER BY run, kind
