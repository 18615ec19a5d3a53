-- The deepest ranking of either run: the metric-vs-k chart runs from k = 1 to it.
-- Reads: view runs. Returns: depth (NULL when no ranking is logged).
SELECT max(len(retrieved_ids)) AS depth FROM runs
