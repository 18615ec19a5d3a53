-- The rules the other queries share, written once as macros (run once per database, before the
-- view runs, which names spans with span_names; one statement each).
--
-- The prompt: the passages the generator received are context_ids whenever it is logged, else
-- the first k of retrieved_ids (k: --k); NULL when neither is known. Two forms of that one rule:
--   prompt_ids(context, retrieved, k): the prompt as a list of passage ids (or of spans);
--   in_prompt(has_context, pos_context, pos_retrieved, k): whether a passage whose 1-based first
--     positions in context_ids and retrieved_ids are pos_context and pos_retrieved is in it
--     (a passage at no position is not; NULL without context_ids and k; a position cannot tell
--     a null retrieved_ids from a passage it lacks, so callers keep it where has_prompt).
--
-- The ranking scored: retrieval metrics are scored on the first k of retrieved_ids with --k,
-- else on context_ids (k its length); the prompt and the ranking scored differ only when --k is
-- given and context_ids is logged. Two forms:
--   scored_list(context, retrieved, k): the ranking scored (of ids or spans), cut at k;
--   scored_pos(pos_context, pos_retrieved, k): a passage's 1-based position in it, uncut.
--
-- A run that logs spans but no passage ids names each span doc_id:start-end (a null span stays
-- null, so the row checks name it; a span with a null field is named with NULL there):
--   span_names(spans), a list of spans as a list of passage ids. || rather than printf, which
--   costs twice as much over millions of passages.
--
-- A sum of floats that is the same bits whatever order DuckDB's threads add the rows in, without
-- sorting them: each term is rounded to a multiple of 2^-60 (exact for |v| >= 2^-7, else within
-- 2^-61), the terms add up exactly in 128-bit integers, and the total is rounded to a double
-- once. It is as close to the true sum as a sum in a fixed order, or closer (|v| < 2^67):
--   exact_sum(v), an aggregate; NULL terms are left out, and no term gives NULL, as sum does.
--   A sum made in parts (batches of questions) adds the integers: fixed_point(v), a term as an
--   integer, and from_fixed_point(total), a sum of them as a double.
--
-- nDCG's gain of a label of grade g, 2^g - 1 (exponential) or g, on a question whose highest
-- grade is top, scaled by 2^-s: s = top - 40 (linear: floor(log2(top)) - 40), or 0 when that is
-- negative, so the top gain is below 2^41 and gains up to grade 40 (linear 2^40) are as written.
-- nDCG is a ratio of sums of gains, so the scale cancels, and a power of two scales a double
-- without rounding. Unscaled, one grade of 67 (2^67 * 2^60 is past 128 bits) or three of 66
-- overflowed exact_sum, and grade 1024 a double; scaled, a question's DCG holds 2^26 ranks of
-- its top gain: gain(grade, top, exponential).
-- A slice column's value as text, NULL when it has none: a float's NaN is no value (pyarrow
-- writes NaN, not null, for a missing float), where a text 'nan' is one; a whole float reads as
-- the integer (2.0 as 2: pandas writes an integer column as floats once a value is missing).
-- Each run's value is read at its own type, so a decimal reads as a float (2.00 as 2, 0.50 as
-- 0.5) and a timestamp at midnight as its date, as another run may log the same day or number;
-- a timestamp with a time zone in UTC (+00), whatever the machine's zone: utc_value(moment);
-- text true or false in any case reads as a boolean does ('True', as Python writes one, as true).
-- TRY_CAST, since v may be of any type (a list's cast is NULL, never an error): slice_value(v).
--
-- A query that is a map over questions runs on a batch of them at a time (RunDatabase): the
-- rows of one question, every run and sample, fall in the same batch of the given number:
--   in_batch(question_id, batches, batch). The casts matter: without them DuckDB does not fold
--   the bound parameters and the filter costs as much as the batch's work.
--
-- A span with no doc_id (null or empty; a trim of every span of the rankings cost ten times
-- the check, so a doc_id of spaces is a name), a negative offset or start >= end cannot be
-- measured (the row checks refuse it): bad_span(spans), the first such span of a list, as
-- STRUCT(doc_id, start, end).
--
-- Spans sorted by document and start overlap only if two neighbours do, which is cheaper to see
-- than to merge them: spans_apart(sorted) is true when no two spans of the sorted list share a
-- character (or it is empty). sorted must be a column, not list_sort(...) itself, which the
-- lambda would sort again for every span.
--
-- Answerable: as logged; else a question is answerable when it has labelled evidence (a passage
-- of grade > 0) or when no relevant_ids is logged at all (only an empty list of labels marks a
-- question unanswerable):
--   answerable(logged, has_labels, n_relevant), n_relevant NULL or 0 without evidence.
--
-- A question's relevant labels as the label-drift check compares them and the label fingerprint
-- hashes them: the sorted list of passage chr(31) grade (grades defaulting to 1 in facts):
--   labelled(relevant_ids, relevant_grades); a question labelled with spans, its labels as
--   they are measured (merged where they overlap, grade 0 left out: table span_matches), an
--   aggregate over its rows there: merged_labelled(id, grade).
--
-- A question's 64-bit key of a text it is fingerprinted by (queries/fingerprints.sql): the first
-- 8 bytes of the MD5 digest of question_id chr(29) text ('' for NULL), read little-endian:
--   question_key(question_id, text).
CREATE OR REPLACE TEMP MACRO prompt_ids(context_ids, retrieved_ids, k) AS
    coalesce(context_ids, retrieved_ids[1:k]);

CREATE OR REPLACE TEMP MACRO in_prompt(has_context, pos_context, pos_retrieved, k) AS
    CASE WHEN has_context THEN pos_context IS NOT NULL
         WHEN k IS NOT NULL THEN coalesce(pos_retrieved <= k, false) END;

CREATE OR REPLACE TEMP MACRO scored_list(context, retrieved, k) AS
    CASE WHEN k IS NULL THEN context ELSE retrieved[1:k] END;

CREATE OR REPLACE TEMP MACRO scored_pos(pos_context, pos_retrieved, k) AS
    CASE WHEN k IS NULL THEN pos_context ELSE pos_retrieved END;

CREATE OR REPLACE TEMP MACRO answerable(logged, has_labels, n_relevant) AS
    coalesce(logged, NOT has_labels OR coalesce(n_relevant, 0) > 0);

CREATE OR REPLACE TEMP MACRO span_names(spans) AS
    list_transform(spans, lambda s: CASE WHEN s IS NOT NULL
        THEN coalesce(s.doc_id || ':' || s.start || '-' || s."end", 'NULL') END);

CREATE OR REPLACE TEMP MACRO fixed_point(v) AS round(v * 1152921504606846976)::HUGEINT;

CREATE OR REPLACE TEMP MACRO from_fixed_point(total) AS total::DOUBLE / 1152921504606846976;

CREATE OR REPLACE TEMP MACRO exact_sum(v) AS from_fixed_point(sum(fixed_point(v)));

CREATE OR REPLACE TEMP MACRO gain_scale(top, exponential) AS
    greatest(CASE WHEN exponential THEN top ELSE floor(log2(top)) END - 40, 0);

CREATE OR REPLACE TEMP MACRO gain(grade, top, exponential) AS
    CASE WHEN exponential
         THEN pow(2, grade - gain_scale(top, true)) - pow(2, -gain_scale(top, true))
         ELSE grade * pow(2, -gain_scale(top, false)) END;

CREATE OR REPLACE TEMP MACRO utc_value(moment) AS
    CASE WHEN moment::TIME = TIME '00:00:00' THEN moment::DATE::VARCHAR
         ELSE moment::VARCHAR || '+00' END;

CREATE OR REPLACE TEMP MACRO slice_value(v) AS
    CASE WHEN typeof(v) = 'TIMESTAMP WITH TIME ZONE'
             THEN utc_value(timezone('UTC', TRY_CAST(v AS TIMESTAMPTZ)))
         WHEN typeof(v) = 'TIMESTAMPTZ_NS'  -- pandas' default for a zoned column
             THEN utc_value(timezone('UTC', TRY_CAST(v AS TIMESTAMPTZ_NS)))
         WHEN typeof(v) IN ('TIMESTAMP', 'TIMESTAMP_S', 'TIMESTAMP_MS', 'TIMESTAMP_NS')
              AND TRY_CAST(v AS TIME) = TIME '00:00:00'
             THEN TRY_CAST(v AS DATE)::VARCHAR
         WHEN typeof(v) = 'VARCHAR' AND lower(v::VARCHAR) IN ('true', 'false')
             THEN lower(v::VARCHAR)
         WHEN typeof(v) NOT IN ('FLOAT', 'DOUBLE') AND NOT starts_with(typeof(v), 'DECIMAL')
             THEN v::VARCHAR
         WHEN isnan(TRY_CAST(v AS DOUBLE)) THEN NULL
         WHEN TRY_CAST(v AS DOUBLE) = trunc(TRY_CAST(v AS DOUBLE))
              AND abs(TRY_CAST(v AS DOUBLE)) < 9007199254740992
             THEN TRY_CAST(v AS DOUBLE)::BIGINT::VARCHAR
         WHEN starts_with(typeof(v), 'DECIMAL') THEN TRY_CAST(v AS DOUBLE)::VARCHAR
         ELSE v::VARCHAR END;

-- A number as DOUBLE; with single, at float32 precision, as the shortest decimal that reads back
-- as the same float32 (0.7, not 0.699999988): how a column either run logs as float32 is read in
-- both, so that the same scores logged by one run as float32 and by the other as float64 are
-- equal. One past float32's range, infinite or NaN stays as it is, for the row checks to name.
CREATE OR REPLACE TEMP MACRO as_number(v, single) AS
    CASE WHEN single AND abs(v::DOUBLE) <= 3.4e38 THEN v::FLOAT::VARCHAR::DOUBLE
         ELSE v::DOUBLE END;

CREATE OR REPLACE TEMP MACRO in_batch(question_id, batches, batch) AS
    hash(question_id) % batches::UBIGINT = batch::UBIGINT;

CREATE OR REPLACE TEMP MACRO bad_span(spans) AS
    list_filter(spans, lambda s: NOT coalesce(s.doc_id <> '' AND 0 <= s.start
                                              AND s.start < s."end", false))[1]
        ::STRUCT(doc_id VARCHAR, start BIGINT, "end" BIGINT);

CREATE OR REPLACE TEMP MACRO spans_apart(sorted) AS
    coalesce(list_bool_and(list_transform(sorted, lambda s, i: i = 1
        OR sorted[i - 1].doc_id <> s.doc_id OR sorted[i - 1]."end" <= s.start)), true);

CREATE OR REPLACE TEMP MACRO labelled(relevant_ids, relevant_grades) AS
    list_sort(list_transform(
        coalesce(relevant_ids, []),
        lambda id, i: id || chr(31) || relevant_grades[i]::VARCHAR
    ));

CREATE OR REPLACE TEMP MACRO merged_labelled(id, grade) AS
    list_sort(list_distinct(list(id || chr(31) || grade::VARCHAR)));

CREATE OR REPLACE TEMP MACRO question_key(question_id, text) AS
    md5_number_upper(question_id || chr(29) || coalesce(text, ''));
