-- Character-level evidence measures of span-labelled questions, which do not depend on how the
-- documents were cut: how much labelled text reached the prompt, and how much of the prompt
-- was labelled text; and the prompt's characters of every question with a span prompt, the
-- unlabelled ones included (the fairness check's context budget).
-- Reads: view runs (context_spans, retrieved_spans), table span_matches (the merged labels),
--   macros prompt_ids and spans_apart (queries/rules.sql).
-- Params: $k INTEGER: the prompt cutoff over retrieved_spans. The prompt is context_spans whenever
--   it is logged, else the first $k of retrieved_spans (NULL without either): these are
--   measures of what the generator read, not of the ranking scored at k.
-- Overlapping prompt passages count their shared characters once: the union of intervals of one
-- document is measured by sorting them by start and adding what each reaches past the furthest
-- end before it (a window, for the prompts where two passages overlap; the others add lengths).
-- Each sample of a question is measured on its own (question_chars.sql averages them).
-- Returns (temp table span_chars): run, question_id, sample, evidence_chars (labelled characters;
--   NULL without span labels), prompt_chars, overlap_chars (labelled characters in the prompt),
--   evidence_recall = overlap / evidence, context_precision = overlap / prompt (0 for an empty
--   prompt), evidence_iou = overlap / (evidence + prompt - overlap); the measures NULL without
--   span labels, all but evidence_chars NULL where the prompt is null.
CREATE OR REPLACE TEMP TABLE span_chars AS
WITH labels AS (
    SELECT DISTINCT run, question_id, sample, doc_id, start, "end" FROM span_matches
),
prompts AS (
    -- a prompt whose passages do not overlap (sorted, neighbours tell) adds their lengths; only
    -- the others go through the window below
    SELECT run, question_id, sample, spans, apart,
           CASE WHEN apart THEN coalesce(list_sum(list_transform(spans,
                lambda s: s."end" - s.start)), 0) END AS apart_chars
    FROM (
        SELECT *, spans_apart(spans) AS apart
        FROM (
            SELECT run, question_id, coalesce(sample, '') AS sample,
                   list_sort(prompt_ids(context_spans, retrieved_spans, $k)) AS spans
            FROM runs
            WHERE len(relevant_spans) > 0 OR context_spans IS NOT NULL
               OR retrieved_spans IS NOT NULL
        )
    )
),
prompt AS (
    SELECT run, question_id, sample, apart, unnest(spans, recursive := true) FROM prompts
),
parts AS (
    SELECT run, question_id, sample, 'prompt' AS part, doc_id, start, "end"
    FROM prompt
    WHERE NOT apart
    UNION ALL
    SELECT l.run, l.question_id, l.sample, 'overlap', l.doc_id,
           greatest(p.start, l.start), least(p."end", l."end")
    FROM labels AS l
    JOIN prompt AS p
      ON p.run = l.run AND p.question_id = l.question_id AND p.sample = l.sample
     AND p.doc_id = l.doc_id
     AND p.start < l."end" AND p."end" > l.start
),
reached AS (
    SELECT run, question_id, sample, part,
           greatest(0, "end" - greatest(start, coalesce(max("end") OVER (
               PARTITION BY run, question_id, sample, part, doc_id ORDER BY start, "end"
               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
           ), start))) AS chars
    FROM parts
),
totals AS (
    SELECT run, question_id, sample,
           coalesce(sum(chars) FILTER (WHERE part = 'prompt'), 0) AS prompt_chars,
           coalesce(sum(chars) FILTER (WHERE part = 'overlap'), 0) AS overlap_chars
    FROM reached
    GROUP BY run, question_id, sample
),
evidence AS (
    SELECT run, question_id, sample, sum("end" - start) AS evidence_chars
    FROM labels
    GROUP BY run, question_id, sample
)
SELECT run, question_id, sample, evidence_chars, prompt_chars, overlap_chars,
       overlap_chars / evidence_chars AS evidence_recall,
       CASE WHEN evidence_chars IS NULL THEN NULL WHEN prompt_chars = 0 THEN 0.0
            ELSE overlap_chars / prompt_chars END AS context_precision,
       overlap_chars / (evidence_chars + prompt_chars - overlap_chars) AS evidence_iou
FROM (
    SELECT p.run, p.question_id, p.sample, e.evidence_chars,
           -- a null prompt (not logged) has unknown measures, not those of an empty one
           CASE WHEN p.spans IS NOT NULL THEN coalesce(p.apart_chars, t.prompt_chars, 0) END
               AS prompt_chars,
           CASE WHEN p.spans IS NOT NULL THEN coalesce(t.overlap_chars, 0) END AS overlap_chars
    FROM prompts AS p
    LEFT JOIN evidence AS e USING (run, question_id, sample)
    LEFT JOIN totals AS t USING (run, question_id, sample)
)
