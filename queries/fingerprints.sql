-- Each question's keys of the fingerprints of a run's partial sums (reportgen/shards.py): the
-- first 8 bytes, read as a little-endian integer, of the MD5 digest of question_id, chr(29)
-- and a text (md5_number_upper; '' for NULL). The texts: its golden labels as label_drift.sql
-- compares them, and the run's own outputs.
-- Reads: tables facts and span_matches and view runs, of run $run ('a' where ragreport metrics
--   opens one log; compare reads both, to tell a candidate whose outputs are the baseline's).
-- Params: $run VARCHAR.
-- Returns: question_id and the keys (UBIGINT) of relevant_key (macro labelled, or
--   merged_labelled of a question labelled with spans, chr(30)-joined),
--   answerable_key ('true', 'false' or NULL, as logged), reference_key (the distinct reference
--   answers of its samples, sorted, chr(30)-joined; NULL when none is logged), outputs_key
--   (the sum mod 2^64 over its samples of the key of the sample's retrieved_ids, context_ids,
--   answer, cited_ids, correct, faithfulness, answer_relevance and abstained as text, chr(30)
--   between them, list items chr(31) between, '' for NULL; spans named doc_id:start-end as view
--   runs names them: a sum, so that no list of long rankings is built per question); in file
--   order (of each question's first sample).
WITH merged AS (
    SELECT question_id, sample, merged_labelled(id, grade) AS labelled
    FROM span_matches
    WHERE run = $run
    GROUP BY ALL
),
samples AS (
    SELECT question_id,
           list_sort(list_distinct(list(reference_answer))) AS refs,
           (sum(question_key(question_id, concat(
               array_to_string(retrieved_ids, chr(31)), chr(30),
               array_to_string(context_ids, chr(31)), chr(30),
               answer, chr(30),
               array_to_string(cited_ids, chr(31)), chr(30),
               correct::VARCHAR, chr(30),
               faithfulness::VARCHAR, chr(30),
               answer_relevance::VARCHAR, chr(30),
               abstained::VARCHAR
           ))::HUGEINT) % 18446744073709551616)::UBIGINT AS outputs_key
    FROM runs
    WHERE run = $run
    GROUP BY question_id
)
SELECT f.question_id,
       question_key(f.question_id, array_to_string(
           coalesce(m.labelled, labelled(f.relevant_ids, f.relevant_grades)), chr(30)))
           AS relevant_key,
       question_key(f.question_id, f.answerable::VARCHAR) AS answerable_key,
       question_key(f.question_id, array_to_string(s.refs, chr(30))) AS reference_key,
       s.outputs_key
FROM (
    -- a question's first sample: its labels agree with its other samples' (sample_problems.sql)
    SELECT * FROM facts
    WHERE run = $run
    QUALIFY row_number() OVER (PARTITION BY question_id ORDER BY row_number) = 1
) AS f
JOIN samples AS s USING (question_id)
LEFT JOIN merged AS m USING (question_id, sample)
ORDER BY f.row_number
