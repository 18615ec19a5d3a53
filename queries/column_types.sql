-- The type of every column of both logs, as DuckDB reads them.
-- Reads: views raw_a, raw_b (every column of each log as written).
-- Returns: run ('a' or 'b'), column_name, data_type (DuckDB's name: BOOLEAN, DOUBLE, VARCHAR,
--   DECIMAL(18,3), ...), in each log's column order.
SELECT right(table_name, 1) AS run, column_name, data_type
FROM information_schema.columns
WHERE table_name IN ('raw_a', 'raw_b')
ORDER BY run, ordinal_position
