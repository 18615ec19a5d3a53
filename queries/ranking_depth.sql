-- The deepest ranking of either run: the metric-vs-k chart runs from k = 1 to it.
-- Reads: table facts. Returns: depth (NULL when no ranking is logged).
SELECT max(depth) AS depth FROM facts
