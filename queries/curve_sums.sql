-- The sums behind the metric-vs-k chart (metric_curve.sql) over one batch of the paired
-- questions: RunDatabase fills the temp table curve_sums a batch at a time, so that the working
-- set of the windows and joins below is a batch's, and metric_curve.sql adds the batches up.
-- Reads: tables relevant (of a question answered several times, its first sample: samples.py)
--   and span_matches (the passages covering a span label, of that sample), view paired_ids;
--   macros gain and fixed_point (queries/rules.sql).
-- Span labels as in question_metrics.sql and span_precision.sql: labels found by one passage take
-- consecutive slots (slot = max(pos, hit_no); pos itself for passage labels), and precision
-- counts the passages relevant to any label, a passage covering two labels once (and a passage
-- listed twice once: span_matches holds its first position only).
-- Params: $exponential BOOLEAN (nDCG gain 2^g - 1, else g); $batches, $batch INTEGER: the
--   questions of this batch (macro in_batch, queries/rules.sql).
-- Works from the relevant passages alone, never from whole rankings: a hit at position p adds
-- to every k >= p (a "step"); nDCG's ideal DCG is still growing while k < n_relevant, so a
-- hit's nDCG share there is added at that k alone (a "point"), and as a step from n_relevant on.
-- Returns: run, metric (recall | precision | hit | mrr | ndcg | map | rprec | all), k, kind
--   ('step' or 'point'), total (the fixed_point sum of the batch's terms, exact in any order).
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
    -- each question's ideal DCG after each rank (idcg_prefix[r]), from its labels' gains in
    -- ideal order: one list a question (a handful of labels) rather than two windows over every
    -- label, which cost about 1.4 times this whole query at 100,000 questions
    SELECT run, question_id,
           list_transform(dg, lambda g, i: list_sum(dg[:i])) AS idcg_prefix,
           list_sum(dg) AS idcg_full
    FROM (
        SELECT run, question_id, list(gain / log2(ideal_rank + 1) ORDER BY ideal_rank) AS dg
        FROM labelled
        GROUP BY run, question_id
    )
),
hits AS (
    -- hit_no: the place among the question's hits, by position, then (labels found by one
    -- passage) highest grade first as in question_metrics.sql, then id; the first hit gives
    -- hit and mrr, and the hit numbered n_relevant completes the set (all)
    SELECT l.run, l.question_id, l.id, l.n_relevant, l.pos_retrieved AS pos, l.gain,
           i.idcg_full,
           row_number() OVER (PARTITION BY l.run, l.question_id
                              ORDER BY l.pos_retrieved, l.gain DESC, l.id) AS hit_no
    FROM labelled AS l
    JOIN ideal AS i USING (run, question_id)
    WHERE l.pos_retrieved IS NOT NULL
),
slotted AS (
    SELECT *, greatest(pos, hit_no) AS slot, gain / log2(greatest(pos, hit_no) + 1) AS dg
    FROM hits
),
covering AS (
    SELECT run, question_id, pos FROM hits ANTI JOIN span_matches USING (run, question_id)
    UNION ALL
    SELECT DISTINCT run, question_id, pos_retrieved
    FROM span_matches
    SEMI JOIN labelled USING (run, question_id, sample)
    WHERE pos_retrieved IS NOT NULL
),
steps AS (
    SELECT run, question_id, 'recall' AS metric, pos AS k, 1.0 / n_relevant AS v FROM hits
    UNION ALL SELECT run, question_id, 'precision', pos, 1.0 FROM covering
    UNION ALL SELECT run, question_id, 'hit', pos, 1.0 FROM hits WHERE hit_no = 1
    UNION ALL SELECT run, question_id, 'mrr', pos, 1.0 / pos FROM hits WHERE hit_no = 1
    UNION ALL SELECT run, question_id, 'ndcg', greatest(slot, n_relevant), dg / idcg_full
        FROM slotted
    UNION ALL SELECT run, question_id, 'map', pos, hit_no / slot / n_relevant FROM slotted
    UNION ALL SELECT run, question_id, 'rprec', pos, 1.0 / n_relevant FROM hits
        WHERE pos <= n_relevant
    UNION ALL SELECT run, question_id, 'all', pos, 1.0 FROM hits WHERE hit_no = n_relevant
),
points AS (
    -- a hit in slot s adds its share at each k from s to n_relevant - 1
    SELECT run, question_id, 'ndcg' AS metric, k, dg / idcg_prefix[k] AS v
    FROM (
        SELECT h.run, h.question_id, h.dg, i.idcg_prefix,
               unnest(range(h.slot, h.n_relevant)) AS k
        FROM slotted AS h
        JOIN ideal AS i USING (run, question_id)
        WHERE h.slot < h.n_relevant
    )
)
SELECT run, metric, k, 'step' AS kind, sum(fixed_point(v)) AS total FROM steps GROUP BY ALL
UNION ALL
SELECT run, metric, k, 'point', sum(fixed_point(v)) FROM points GROUP BY ALL
