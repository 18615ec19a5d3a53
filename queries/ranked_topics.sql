-- One row per topic of a ranking (a TREC run, BEIR results) in the run-log contract, with its
-- judgements, in trec_eval's semantics.
-- Reads: views ranking (qid, docno, value: the score; a topic that retrieved nothing, as BEIR
--   results can list one, is a row with docno NULL) and judgements (line, qid, docno, value:
--   the grade), both checked by ranking_problems.sql. A judgement given twice keeps its last line.
-- Params: $rel_level BIGINT: the lowest grade that is relevant (trec_eval's -l).
-- Returns: question_id, retrieved_ids (score descending, ties by docno descending; scores are
--   compared in single precision, as trec_eval and pytrec_eval hold them, so that scores equal
--   there tie here too; one beyond its range counts as its largest), relevant_ids
--   (every judged document of the topic, by docno), relevant_grades (aligned: the grade, or 0,
--   judged not relevant, below $rel_level); both NULL for a topic without judgements. In
--   question_id order.
WITH ranked AS (
    SELECT
        qid,
        coalesce(list(
            docno
            -- 3.4028234663852886e38: the largest single-precision number
            ORDER BY greatest(least(value::DOUBLE, 3.4028234663852886e38), -3.4028234663852886e38)
                ::FLOAT DESC,
                docno DESC
        ) FILTER (WHERE docno IS NOT NULL), []) AS retrieved_ids
    FROM ranking
    GROUP BY qid
),
judged AS (
    SELECT qid, docno, arg_max(value::BIGINT, line) AS grade
    FROM judgements
    GROUP BY qid, docno
),
labels AS (
    SELECT
        qid,
        list(docno ORDER BY docno) AS relevant_ids,
        list(CASE WHEN grade >= $rel_level THEN grade ELSE 0 END ORDER BY docno)
            AS relevant_grades
    FROM judged
    GROUP BY qid
)
SELECT qid AS question_id, retrieved_ids, relevant_ids, relevant_grades
FROM ranked
LEFT JOIN labels USING (qid)
ORDER BY question_id
