-- Each row of the table `per_question` as one JSON object, in the table's order (DuckDB keeps
-- the order of a scan it only projects). NaN is written as null.
SELECT to_json(row_)::VARCHAR AS line
FROM per_question AS row_
