-- The first bad line of a TREC run, TREC qrels or BEIR qrels file (inputs/readers/ranking.py):
-- a value that is not a number (not an integer when $integer: a grade), an infinite score, or,
-- when $unique, a document listed again for a topic.
-- Reads: view lines (line, qid, docno, value: the text of the fields of each line that has the
--   file's number of fields).
-- Params: $integer BOOLEAN, $unique BOOLEAN.
-- Returns: at most one row, the problem of the earliest line: line, problem ('repeated' |
--   'not_number' | 'not_finite'), qid, docno, value, first_line (the line that first listed the
--   topic's document).
WITH checked AS (
    SELECT
        line, qid, docno, value,
        CASE WHEN $unique THEN min(line) OVER (PARTITION BY qid, docno) ELSE line END AS first_line,
        CASE WHEN NOT $integer THEN TRY_CAST(value AS DOUBLE)
             WHEN regexp_full_match(value, '[+-]?[0-9]+') THEN TRY_CAST(value AS BIGINT) END
            AS number
    FROM lines
)
SELECT
    line,
    CASE WHEN line > first_line THEN 'repeated'
         WHEN number IS NULL THEN 'not_number'
         ELSE 'not_finite' END AS problem,
    qid, docno, value, first_line
FROM checked
WHERE line > first_line OR number IS NULL OR NOT isfinite(number)
ORDER BY line
LIMIT 1
