-- Paired questions whose golden labels differ between the runs: the golden set was not frozen.
-- Reads: table facts, and view runs for the reference answers (the label correct is judged
--   against; facts does not keep their text). Labels compare as sets of (passage, grade), grades
--   defaulting to 1; reference answers as the set of a question's samples', where both runs log
--   them.
-- Returns: question_id, changed (comma-separated: relevant labels, answerable, reference
--   answer); in A's file order.
WITH labels AS (
    SELECT run, question_id, row_number, answerable,
           list_sort(list_transform(
               coalesce(relevant_ids, []),
               lambda id, i: id || chr(31) || relevant_grades[i]::VARCHAR
           )) AS labelled
    FROM facts
),
refs AS (
    SELECT run, question_id, list_sort(list_distinct(list(reference_answer))) AS refs
    FROM runs
    WHERE reference_answer IS NOT NULL
    GROUP BY run, question_id
)
SELECT a.question_id,
       concat_ws(', ',
           CASE WHEN a.labelled IS DISTINCT FROM b.labelled THEN 'relevant labels' END,
           CASE WHEN a.answerable IS DISTINCT FROM b.answerable THEN 'answerable' END,
           CASE WHEN ra.refs <> rb.refs THEN 'reference answer' END
       ) AS changed
FROM labels AS a
JOIN labels AS b ON a.question_id = b.question_id AND b.run = 'b'
LEFT JOIN refs AS ra ON ra.run = 'a' AND ra.question_id = a.question_id
LEFT JOIN refs AS rb ON rb.run = 'b' AND rb.question_id = a.question_id
WHERE a.run = 'a'
  AND (a.labelled IS DISTINCT FROM b.labelled OR a.answerable IS DISTINCT FROM b.answerable
       OR ra.refs <> rb.refs)
ORDER BY a.row_number
