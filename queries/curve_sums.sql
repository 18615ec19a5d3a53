-- The sums behind the metric-vs-k chart (metric_curve.sql) over one batch of the paired
-- questions: RunDatabase fills the temp table curve_sums a batch at a time, so that the working
-- set of the windows and joins below is a batch's, and metric_curve.sql adds the batches up.
-- Reads: tables relevant (of a question answered several times, its first sample: samples.py)
--   and span_matches (the passages covering a span label, of that sample), table paired_ids;
--   macros gain, fixed_point and from_fixed_point (queries/rules.sql).
-- Span labels as in question_metrics.sql and span_precision.sql: the j-th label found takes slot
-- max(pos, j) (pos itself for passage labels), and precision
-- counts the passages relevant to any label, a passage covering two labels once (and a passage
-- listed twice once: span_matches holds its first position only).
-- Params: $exponential BOOLEAN (nDCG gain 2^g - 1, else g); $batches, $batch INTEGER: the
--   questions of this batch (macro in_batch, queries/rules.sql).
-- Works from the relevant passages alone, never from whole rankings: a question's score changes
-- only at the k where a label is found (its position; for nDCG and AP its slot) and, for nDCG, while its
-- ideal DCG grows (k < n_relevant). There the question adds the change of its score as a
-- fixed_point integer, fixed_point(score at k) - fixed_point(score before k), where the score is
-- the double question_metrics.sql computes at that cutoff (the same exact_sum terms, sums and
-- divisions). A question's changes up to k add up exactly to fixed_point(its score at k), so the
-- curve at k is the exact sum of the questions' own scores, never past n times their bound:
-- adding 1 / n_relevant at each hit gave 1 - 2^-53 for 7 hits of 7, and 1 + 2^-52 on a TREC run.
-- nDCG's changes are added from k = n_relevant on, where its ideal DCG is whole; below, a
-- question that has found something adds fixed_point(its nDCG at k) at that k alone (ndcg_at).
-- Precision, hits / k, changes at every k: its column counts the relevant passages (an integer),
-- which metric_curve.sql divides by n * k.
-- Returns: run, k, and per metric (recall, precision, hit, mrr, ndcg, map, rprec, all) the
--   batch's sum of the changes at k (HUGEINT fixed_point; precision: a count of passages), and
--   ndcg_at, the nDCG at k of the questions whose ideal DCG is still growing there.
WITH labelled AS (
    SELECT run, question_id, sample, id, ideal_rank, n_relevant, pos_retrieved,
           gain(grade, top_grade, $exponential) AS gain
    FROM relevant
    WHERE in_batch(question_id, $batches, $batch)
      AND question_id IN (
          SELECT question_id FROM paired_ids WHERE in_batch(question_id, $batches, $batch)
      )
),
ideal AS (
    -- each question's ideal DCG through each rank (idcg_prefix[r]) as question_metrics.sql's
    -- exact_sum has it, from its labels' terms in ideal order: one list a question (a handful
    -- of labels) rather than two windows over every label, which cost about 1.4 times this
    -- whole query at 100,000 questions
    SELECT run, question_id,
           list_transform(terms, lambda t, i: list_sum(terms[:i])) AS idcg_prefix,
           list_sum(terms) AS idcg_full
    FROM (
        SELECT run, question_id,
               list(fixed_point(gain / log2(ideal_rank + 1)) ORDER BY ideal_rank) AS terms
        FROM labelled
        GROUP BY run, question_id
    )
),
hits AS (
    -- hit_no: the place among the question's hits, by position, then (labels found by one
    -- passage) highest grade first as in question_metrics.sql, then id; the first hit gives
    -- hit and mrr, and the hit numbered n_relevant completes the set (all)
    SELECT run, question_id, n_relevant, pos_retrieved AS pos, gain,
           row_number() OVER (PARTITION BY run, question_id
                              ORDER BY pos_retrieved, gain DESC, id) AS hit_no
    FROM labelled
    WHERE pos_retrieved IS NOT NULL
),
slotted AS (
    SELECT run, question_id, n_relevant, pos, hit_no, greatest(pos, hit_no) AS slot,
           fixed_point(hit_no / greatest(pos, hit_no)) AS ap_term,
           fixed_point(gain / log2(greatest(pos, hit_no) + 1)) AS dcg_term
    FROM hits
),
summed AS (
    -- the sums of average precision and DCG through each hit (slots grow with hit_no), and
    -- the slot of the next hit, up to which the DCG stays
    SELECT *, sum(ap_term) OVER w AS ap, sum(dcg_term) OVER w AS dcg,
           lead(slot) OVER w AS next_slot
    FROM slotted
    WINDOW w AS (PARTITION BY run, question_id ORDER BY hit_no ROWS UNBOUNDED PRECEDING)
),
changes AS (
    -- at a hit's position (nDCG: slot, from n_relevant on), fixed_point(score with it) -
    -- fixed_point(score before it), each score as question_metrics.sql computes it
    SELECT s.run, s.question_id, s.n_relevant, s.pos, s.slot, s.dcg, s.next_slot,
           fixed_point(hit_no / n_relevant) - fixed_point((hit_no - 1) / n_relevant) AS recall,
           CASE WHEN hit_no = 1 THEN fixed_point(1.0) ELSE 0 END AS hit,
           CASE WHEN hit_no = 1 THEN fixed_point(1 / pos) ELSE 0 END AS mrr,
           fixed_point(from_fixed_point(dcg) / from_fixed_point(i.idcg_full))
           - fixed_point(from_fixed_point(dcg - dcg_term) / from_fixed_point(i.idcg_full))
               AS ndcg,
           fixed_point(from_fixed_point(ap) / n_relevant)
           - fixed_point(from_fixed_point(ap - ap_term) / n_relevant) AS map,
           CASE WHEN hit_no = n_relevant THEN fixed_point(1.0) ELSE 0 END AS "all",
           i.idcg_prefix
    FROM summed AS s
    JOIN ideal AS i USING (run, question_id)
),
ndcg_points AS (
    -- k < n_relevant: a question's nDCG at k, from the DCG of its last hit in slot <= k
    SELECT run, k,
           fixed_point(from_fixed_point(dcg) / from_fixed_point(idcg_prefix[k])) AS ndcg_at
    FROM (
        SELECT run, dcg, idcg_prefix,
               unnest(range(slot, least(coalesce(next_slot, n_relevant), n_relevant))) AS k
        FROM changes
        WHERE slot < n_relevant
    )
),
covering AS (
    SELECT run, question_id, pos FROM hits ANTI JOIN span_matches USING (run, question_id)
    UNION ALL
    SELECT DISTINCT run, question_id, pos_retrieved
    FROM span_matches
    SEMI JOIN labelled USING (run, question_id, sample)
    WHERE pos_retrieved IS NOT NULL
)
SELECT run, k, sum(recall) AS recall, sum(precision) AS precision, sum(hit) AS hit,
       sum(mrr) AS mrr, sum(ndcg) AS ndcg, sum(map) AS map, sum(rprec) AS rprec,
       sum("all") AS "all", sum(ndcg_at) AS ndcg_at
FROM (
    SELECT run, pos AS k, recall, hit, mrr, "all",
           CASE WHEN pos <= n_relevant THEN recall ELSE 0 END AS rprec
    FROM changes
    UNION ALL BY NAME
    SELECT run, slot AS k, map FROM changes
    UNION ALL BY NAME
    SELECT run, greatest(slot, n_relevant) AS k, ndcg FROM changes
    UNION ALL BY NAME
    SELECT run, k, ndcg_at FROM ndcg_points
    UNION ALL BY NAME
    SELECT run, pos AS k, count(*) AS precision FROM covering GROUP BY run, pos
)
GROUP BY run, k
