-- Paired questions whose golden labels differ between the runs: the golden set was not frozen.
-- Reads: table facts. Labels compare as sets of (passage, grade), grades defaulting to 1.
-- Returns: question_id, changed (comma-separated: relevant labels, answerable); in A's file order.
WITH labels AS (
    SELECT run, question_id, row_number, answerable,
           list_sort(list_transform(
               coalesce(relevant_ids, []),
               lambda id, i: id || chr(31) || relevant_grades[i]::VARCHAR
           )) AS labelled
    FROM facts
)
SELECT a.question_id,
       concat_ws(', ',
           CASE WHEN a.labelled IS DISTINCT FROM b.labelled THEN 'relevant labels' END,
           CASE WHEN a.answerable IS DISTINCT FROM b.answerable THEN 'answerable' END
       ) AS changed
FROM labels AS a
JOIN labels AS b ON a.question_id = b.question_id AND b.run = 'b'
WHERE a.run = 'a'
  AND (a.labelled IS DISTINCT FROM b.labelled OR a.answerable IS DISTINCT FROM b.answerable)
ORDER BY a.row_number
