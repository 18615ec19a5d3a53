-- Labels that lie between the passages of their document: no passage of the run's passage table
-- overlaps them, though passages of the document reach past their start. Text the chunker put
-- in no passage (a heading, a table, a page footer it dropped), which no passage can cover.
-- Reads: views labels (doc_id, start, end: the log's distinct labels) and passages (doc_id,
--   start, end).
-- Returns: doc_id, start, end of each such label, by document and start.
SELECT l.doc_id, l.start, l."end"
FROM labels AS l
SEMI JOIN passages AS p ON p.doc_id = l.doc_id AND p."end" > l.start
ANTI JOIN passages AS q ON q.doc_id = l.doc_id AND q.start < l."end" AND q."end" > l.start
ORDER BY l.doc_id, l.start, l."end"
