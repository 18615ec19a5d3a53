-- Labels in a gap of their document's passages: no passage of the run's passage table overlaps
-- them, though a passage of the document ends past their start (a label past the last passage
-- is another note). Text the chunker put in no passage (a heading, a table, a page footer it
-- dropped), which no passage can cover.
-- Reads: views labels (doc_id, start, end: the log's distinct labels) and passages (doc_id,
--   start, end).
-- Returns: doc_id, start, end of each such label, by document and start.
-- A passage overlaps a label when it starts before the label ends and ends after it starts: so
-- none does when the furthest end of the passages starting before the label ends is at most its
-- start. That end is a running max over the passages by start (ties included: the window's
-- default RANGE frame), found for each label by an ASOF join straight over the labels (DuckDB
-- plans an ASOF join whose input it estimates under asof_loop_join_threshold rows as a loop
-- over every passage, so its input is the labels' own scan). A join of every passage of a
-- document with each of its labels took 16 s for one document of 100k passages and 20k labels.
WITH reach AS (
    SELECT doc_id, start, max("end") OVER (PARTITION BY doc_id ORDER BY start) AS far
    FROM passages
),
documents AS (
    SELECT doc_id, max("end") AS doc_end FROM passages GROUP BY doc_id
)
SELECT l.doc_id, l.start, l."end"
FROM labels AS l
ASOF LEFT JOIN reach AS r ON r.doc_id = l.doc_id AND l."end" > r.start
JOIN documents AS d ON d.doc_id = l.doc_id AND d.doc_end > l.start
WHERE coalesce(r.far <= l.start, true)
ORDER BY l.doc_id, l.start, l."end"
