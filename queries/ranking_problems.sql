-- The first bad line of a TREC run, TREC qrels or BEIR qrels file (inputs/readers/ranking.py):
-- a value that is not a number (not an integer when $integer: a grade; a digit separator _ is
-- not read), an infinite score, or,
-- when $unique, a document listed again for a topic.
-- Reads: view lines (line, qid, docno, value: the text of the fields of each line that has the
--   file's number of fields).
-- Params: $integer BOOLEAN, $unique BOOLEAN.
-- Returns: at most one row, the problem of the earliest line: line, problem ('repeated' |
--   'not_number' | 'not_finite'), qid, docno, value (NULL for 'repeated'), first_line (the line
--   that first listed the topic's document).
WITH suspect AS (
    -- distinct hashes of (qid, docno) fewer than lines: some document may be listed twice (a
    -- hash collision only costs the grouping below); a third of the grouping's cost
    SELECT $unique AND count(DISTINCT hash(qid, docno)) < count(*) AS repeats FROM lines
),
listed_twice AS (
    SELECT qid, docno, min(line, 2) AS lines
    FROM lines
    WHERE (SELECT repeats FROM suspect)
    GROUP BY qid, docno
    HAVING count(*) > 1
),
numbers AS (
    SELECT line, qid, docno, value,
           -- DuckDB reads 1_0 as 10, where trec_eval's atof reads 1: such a score is refused
           CASE WHEN NOT $integer AND NOT contains(value, '_') THEN TRY_CAST(value AS DOUBLE)
                WHEN regexp_full_match(value, '[+-]?[0-9]+') THEN TRY_CAST(value AS BIGINT) END
               AS number
    FROM lines
)
SELECT line, problem, qid, docno, value, first_line
FROM (
    SELECT lines[2] AS line, 'repeated' AS problem, qid, docno, NULL AS value,
           lines[1] AS first_line, 0 AS priority
    FROM listed_twice
    UNION ALL
    SELECT line, CASE WHEN number IS NULL THEN 'not_number' ELSE 'not_finite' END, qid, docno,
           value, line, 1
    FROM numbers
    WHERE number IS NULL OR NOT isfinite(number)
)
ORDER BY line, priority
LIMIT 1
